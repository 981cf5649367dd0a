package policy_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/policy"
)

// The real opa CLI (v1.22.3, installed into .tools by make tools) agrees
// with ckgate: the default policies pass `opa check --strict` and `opa
// test`, and every user policy Check refuses as strict, opa refuses too.
// What passes `ckgate policy test` passes the OPA tooling users run in CI.
func TestRealOPAAgrees(t *testing.T) {
	opa, err := emulator.Find("opa", "bin/opa")
	emulator.Require(t, err)
	root, err := emulator.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	rego := filepath.Join(root, "policy", "rego")
	for _, args := range [][]string{{"check", "--strict", rego}, {"test", rego}} {
		if out, err := exec.Command(opa, args...).CombinedOutput(); err != nil {
			t.Fatalf("opa %v: %v\n%s", args, err, out)
		}
	}
	for name, src := range map[string]string{
		"unused argument": "package ckgate.gateway.rules.mine\n\nbig(x, y) if x > 10\n\ndeny contains \"big\" if big(input.size, 1)\n",
		"unused local":    "package ckgate.gateway.rules.mine\n\ndeny contains \"big\" if {\n\tn := input.size\n\tinput.size > 10\n}\n",
		"clean":           "package ckgate.gateway.rules.mine\n\ndeny contains \"big\" if input.size > 10\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"mine.rego": src})
			out, opaErr := exec.Command(opa, "check", "--strict", dir).CombinedOutput()
			ckErr := policy.Check(context.Background(), policy.TestOptions{Dirs: []string{dir}})
			if (opaErr == nil) != (ckErr == nil) {
				t.Fatalf("opa check --strict: %v (%s); ckgate Check: %v", opaErr, out, ckErr)
			}
		})
	}
}

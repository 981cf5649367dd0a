package policy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/policy"
)

// TestDefaultPoliciesStrict: every default module and its tests compile as
// `opa check --strict policy/rego` compiles them.
func TestDefaultPoliciesStrict(t *testing.T) {
	if err := policy.Check(context.Background(), policy.TestOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A user policy that `opa check --strict` refuses is refused by Check and
// by RunTests, naming file:line; the engine, which decides, is not strict.
func TestUserPolicyStrict(t *testing.T) {
	ctx := context.Background()
	for name, src := range map[string]string{
		"unused argument": "package ckgate.gateway.rules.mine\n\nbig(x, y) if x > 10\n\ndeny contains \"big\" if big(input.size, 1)\n",
		"unused local":    "package ckgate.gateway.rules.mine\n\ndeny contains \"big\" if {\n\tn := input.size\n\tinput.size > 10\n}\n",
		"unused import":   "package ckgate.gateway.rules.mine\n\nimport data.ckgate.lib\n\ndeny contains \"big\" if input.size > 10\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"mine.rego": src})
			err := policy.Check(ctx, policy.TestOptions{Dirs: []string{dir}})
			if err == nil || !strings.Contains(err.Error(), "mine.rego:") {
				t.Fatalf("Check: %v, want a strict error naming mine.rego:LINE", err)
			}
			if _, err := policy.RunTests(ctx, policy.TestOptions{Dirs: []string{dir}}); err == nil || !strings.Contains(err.Error(), "mine.rego:") {
				t.Fatalf("RunTests: %v, want the strict error", err)
			}
			if _, err := policy.New(ctx, policy.Options{PolicyDirs: []string{dir}}); err != nil {
				t.Fatalf("New: %v", err)
			}
		})
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// userPolicy writes the Rego module rego as dir/policy/file and returns
// the policy directory, dir/policy.
func userPolicy(t *testing.T, dir, file, rego string) string {
	t.Helper()
	pol := filepath.Join(dir, "policy")
	if err := os.MkdirAll(pol, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pol, file), []byte(rego), 0o644); err != nil {
		t.Fatal(err)
	}
	return pol
}

// conftestDir copies testdata/conftest into a new directory: a user
// policy with rules written the conftest way (deny and warn sets of string
// and object messages) and their tests.
func conftestDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "conftest"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A conftest-style deny that `policy test` reports is what store put and
// policy eval enforce: exit 4 naming the message; a warn allows and is
// shown; an object message is named by its code.
func TestConftestStylePolicyEnforced(t *testing.T) {
	pol := conftestDir(t)
	ckgate(t, Options{}, "", "policy", "test", "--verbose", pol).want(t, 0, "test_exe_denied: PASS", "test_tmp_denied_by_code: PASS", "test_bak_warned: PASS")

	lake := t.TempDir()
	data := writeFile(t, "MZ")
	ckgate(t, Options{}, "", "store", "put", "--policy", pol, data, lake, "bin/a.exe").wantErr(t, 4, "rule team:", "no executables in the lake: file://"+lake+"/bin/a.exe")
	ckgate(t, Options{}, "", "store", "put", "--policy", pol, data, lake, "a.tmp").wantErr(t, 4, "rule TEAM-007 (team): no temporary files")
	for _, k := range []string{"bin/a.exe", "a.tmp"} {
		if _, err := os.Stat(filepath.Join(lake, k)); !os.IsNotExist(err) {
			t.Fatalf("%s written by a refused put: %v", k, err)
		}
	}
	r := ckgate(t, Options{}, "", "store", "put", "--policy", pol, data, lake, "a.bak")
	r.want(t, 0)
	if !strings.Contains(r.stderr, "warning") || !strings.Contains(r.stderr, "rule team: a backup file: keep it out of the lake") {
		t.Fatalf("the warning is not shown:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(lake, "a.bak")); err != nil {
		t.Fatalf("a warned put did not write: %v", err)
	}
	dlog := filepath.Join(t.TempDir(), "decisions.jsonl")
	ckgate(t, Options{}, "", "store", "put", "--policy", pol, "--decision-log", dlog, data, lake, "b.bak").want(t, 0)
	if rec, _ := os.ReadFile(dlog); !strings.Contains(string(rec), `"warnings":["team: a backup file`) {
		t.Fatalf("decision log lacks the warning:\n%s", rec)
	}

	// policy eval on the same inputs gives the same verdicts
	in := func(name string) string {
		loc := "file://" + lake + "/" + name
		return `{"action":"put","key":"` + name + `","location":"` + loc + `","path":"` + loc + `","root":"file://` + lake + `","roots":[],"scope":"file://` + lake + `","cond":"if-absent","principal":{"id":"alice","kind":"admin"}}`
	}
	ckgate(t, Options{}, in("bin/a.exe"), "policy", "eval", "--policy", pol, "-").wantErr(t, 4, "no executables in the lake")
	ckgate(t, Options{}, in("a.tmp"), "policy", "eval", "--policy", pol, "-").wantErr(t, 4, "TEAM-007")
	ckgate(t, Options{}, in("a.bak"), "policy", "eval", "--policy", pol, "-").want(t, 0, "allow", "warning team: a backup file")
	ckgate(t, Options{}, in("a.bak"), "policy", "eval", "--format", "json", "--policy", pol, "-").want(t, 0, `"warn": [`, `"severity": "warn"`)
}

// Rules the gateway would never read, and what `opa check --strict`
// refuses, fail `policy test` naming file:line; the misplaced rules fail
// the commands that decide too.
func TestPolicyTestRefusesWhatOPAOrTheGatewayWould(t *testing.T) {
	main := t.TempDir()
	os.WriteFile(filepath.Join(main, "main.rego"), []byte("package main\n\ndeny contains \"no\" if input.action == \"put\"\n"), 0o644)
	os.WriteFile(filepath.Join(main, "main_test.rego"), []byte("package main_test\n\nimport data.main\n\ntest_denies if main.deny == {\"no\"} with input as {\"action\": \"put\"}\n"), 0o644)
	ckgate(t, Options{}, "", "policy", "test", main).wantErr(t, 2, "main.rego:3", "package main", "ckgate.gateway.rules.<name>")
	ckgate(t, Options{}, "", "store", "put", "--policy", main, writeFile(t, "x"), t.TempDir(), "k").wantErr(t, 2, "main.rego:3", "package main")

	unused := t.TempDir()
	os.WriteFile(filepath.Join(unused, "team.rego"), []byte("package ckgate.gateway.rules.team\n\nbig(size, limit) if size > 10\n\ndeny contains \"big\" if big(input.size, 1)\n"), 0o644)
	ckgate(t, Options{}, "", "policy", "test", unused).wantErr(t, 2, "team.rego:3", "unused argument limit")
	ckgate(t, Options{}, "", "policy", "test").want(t, 0, "PASS: ") // the defaults pass the strict check
}

// `run` decides its checkpoint and sink writes with the same rules: a
// conftest-style deny on the output stops it before any output exists; a
// warn lets it write and shows the warning for each such file.
func TestRunConftestStyleRules(t *testing.T) {
	dir, sp := demoDir(t)
	pol := userPolicy(t, dir, "out.rego", `package ckgate.gateway.rules.outfreeze

deny contains msg if {
	input.action == "put"
	contains(input.location, "/demo/out/")
	msg := sprintf("output is frozen: %s", [input.location])
}
`)
	r := runCLI(t, dir, "run", "--policy", pol, "--checkpoint", "demo/checkpoint", "--available-now", sp)
	r.wantErr(t, 4, "rule outfreeze: output is frozen")
	if got := listTree(t, filepath.Join(dir, "demo", "out")); len(got) != 0 {
		t.Fatalf("refused sink wrote %v", got)
	}

	dir, sp = demoDir(t) // a fresh demo: nothing of the refused run's
	pol = userPolicy(t, dir, "out.rego", `package ckgate.gateway.rules.outfreeze

warn contains {"msg": "output written during the freeze", "code": "ORG-W1"} if {
	input.action == "put"
	contains(input.location, "/demo/out/")
}

warn contains "opened during the freeze" if input.action == "open"
`)
	r = runCLI(t, dir, "run", "--policy", pol, "--checkpoint", "demo/checkpoint", "--available-now", sp)
	r.want(t, 0)
	if !strings.Contains(r.stderr, "ckgate: warning: policy: put file://") || !strings.Contains(r.stderr, "rule ORG-W1 (outfreeze): output written during the freeze") {
		t.Fatalf("the run's warnings are not shown:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "ckgate: warning: policy: open file://") || !strings.Contains(r.stderr, "rule outfreeze: opened during the freeze") {
		t.Fatalf("the open's warning is not shown:\n%s", r.stderr)
	}
	if got := listTree(t, filepath.Join(dir, "demo", "out")); len(got) == 0 {
		t.Fatal("a warned run wrote no output")
	}
}

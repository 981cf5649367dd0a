package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPolicyTest(t *testing.T) {
	ckgate(t, Options{}, "", "policy", "test").want(t, 0, "PASS: ")
	ckgate(t, Options{}, "", "policy", "test", "../../testdata/policies/example").want(t, 0, "PASS: ")
	r := ckgate(t, Options{}, "", "policy", "test", "--format", "json", "--run", "example", "../../testdata/policies/example")
	r.want(t, 0)
	var results []struct {
		Name string `json:"name"`
		Pass bool   `json:"pass"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &results); err != nil || len(results) != 3 {
		t.Fatalf("json results %q: %v", r.stdout, err)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x_test.rego"), []byte("package x_test\n\ntest_broken if 1 == 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "policy", "test", "--no-defaults", dir).want(t, 1, "test_broken: FAIL", "FAIL: 1/1")
	if err := os.WriteFile(filepath.Join(dir, "y.rego"), []byte("package y\n\nallow if {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "policy", "test", dir).wantErr(t, 2, "y.rego")
	ckgate(t, Options{}, "", "policy", "test", filepath.Join(dir, "missing")).wantErr(t, 2, "missing")
}

func TestPolicyRules(t *testing.T) {
	ckgate(t, Options{}, "", "policy", "rules").want(t, 0, "CKG-P002", "job-deletes-log-entry", "CKG-A001")
	r := ckgate(t, Options{}, "", "policy", "rules", "--format", "json")
	r.want(t, 0)
	var rules []struct{ ID, Severity string }
	if err := json.Unmarshal([]byte(r.stdout), &rules); err != nil || len(rules) < 15 {
		t.Fatalf("rules %q: %v", r.stdout, err)
	}
}

func TestPolicyEval(t *testing.T) {
	deny := `{"action":"delete","key":"offsets/3","root":"s3://b/q1","principal":{"id":"cron","kind":"housekeeping"}}`
	r := ckgate(t, Options{}, deny, "policy", "eval", "-")
	r.wantErr(t, 4, "CKG-P004")
	if !strings.HasPrefix(r.stdout, "deny\n") {
		t.Fatalf("stdout %q", r.stdout)
	}
	allow := `{"action":"put","key":"offsets/3","cond":"if-absent","root":"s3://b/q1","writer_session":true,"principal":{"id":"svc","kind":"job"}}`
	ckgate(t, Options{}, allow, "policy", "eval", "-").want(t, 0, "allow")

	// break glass is recorded in the decision log, or refused without one
	glass := `{"action":"delete","key":"offsets/3","root":"s3://b/q1","principal":{"id":"alice","kind":"admin","reason":"INC-7"}}`
	ckgate(t, Options{}, glass, "policy", "eval", "-").wantErr(t, 4, "CKG-P000", "decision log")
	log := filepath.Join(t.TempDir(), "decisions.jsonl")
	ckgate(t, Options{}, glass, "policy", "eval", "--decision-log", log, "-").want(t, 0, "break glass: INC-7", "CKG-P004")
	data, err := os.ReadFile(log)
	if err != nil || !strings.Contains(string(data), `"break_glass":true`) || !strings.Contains(string(data), `"reason":"INC-7"`) {
		t.Fatalf("decision log %q: %v", data, err)
	}

	// a user policy and data join the decision
	big := `{"action":"put","key":"sources/0/0","size":5000000,"cond":"if-absent","root":"s3://b/q1","writer_session":true,"principal":{"id":"svc","kind":"job"}}`
	ckgate(t, Options{}, big, "policy", "eval", "--policy", "../../testdata/policies/example", "-").wantErr(t, 4, "EXAMPLE-001")
	r = ckgate(t, Options{}, big, "policy", "eval", "--format", "json", "-")
	r.want(t, 0, `"allow": true`)

	ckgate(t, Options{}, `{"action":"rename","root":"r"}`, "policy", "eval", "-").wantErr(t, 2, "rename")
	ckgate(t, Options{}, `{"action":"put","key":"k","root":"r","colour":"red"}`, "policy", "eval", "-").wantErr(t, 2, "colour")
	ckgate(t, Options{}, allow, "policy", "eval", "--policy", "/nonexistent/dir", "-").wantErr(t, 2, "/nonexistent/dir")
}

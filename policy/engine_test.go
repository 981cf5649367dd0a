package policy_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/format"

	"github.com/ckgate/ckgate/policy"
)

// engine returns an engine with the default policies and o.
func engine(t testing.TB, o policy.Options) *policy.Engine {
	t.Helper()
	e, err := policy.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// writeFiles writes name → content under a new temp dir and returns it.
func writeFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRegoUnitTests runs every Rego unit test of the default policies.
func TestRegoUnitTests(t *testing.T) {
	results, err := policy.RunTests(context.Background(), policy.TestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) < 80 {
		t.Fatalf("%d Rego tests ran, want the default suite (80 or more)", len(results))
	}
	for _, r := range results {
		if r.Failed() {
			t.Errorf("%s.%s (%s): %s %s", r.Package, r.Name, r.Location, r.Error, r.Output)
		}
	}
}

// TestEveryRuleHasRegoTests: each catalogued rule id appears in a Rego test
// file (CKG-P000 is the engine's own and is tested in Go).
func TestEveryRuleHasRegoTests(t *testing.T) {
	var tests strings.Builder
	err := fs.WalkDir(policy.DefaultPolicies(), "rego", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.rego") {
			return err
		}
		b, err := fs.ReadFile(policy.DefaultPolicies(), path)
		tests.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ToLower(strings.ReplaceAll(tests.String(), "-", ""))
	rules := engine(t, policy.Options{}).Rules()
	if len(rules) < 15 {
		t.Fatalf("catalogue has %d rules", len(rules))
	}
	for _, r := range rules {
		if r.ID == policy.RuleFailClosed {
			continue
		}
		// tests are named test_p001_..., test_a004_...
		short := strings.ToLower(strings.TrimPrefix(r.ID, "CKG-"))
		if !strings.Contains(text, "test_"+short+"_") && !strings.Contains(text, strings.ToLower(strings.ReplaceAll(r.ID, "-", ""))) {
			t.Errorf("rule %s (%s) has no Rego test named test_%s_...", r.ID, r.Name, short)
		}
		if r.Name == "" || r.Description == "" || !slices.Contains([]string{"deny", "warn", "unknown"}, r.Severity) {
			t.Errorf("rule %s: incomplete catalogue entry %+v", r.ID, r)
		}
	}
}

func TestUserPolicyDirTestsRun(t *testing.T) {
	results, err := policy.RunTests(context.Background(), policy.TestOptions{
		Dirs: []string{"../testdata/policies/example"}, Run: "example",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("ran %d tests, want the example's 3: %+v", len(results), results)
	}
	for _, r := range results {
		if r.Failed() {
			t.Errorf("%s.%s: %s", r.Package, r.Name, r.Error)
		}
	}
}

func TestRegoTestFailureIsReported(t *testing.T) {
	dir := writeFiles(t, map[string]string{"bad_test.rego": "package bad_test\n\ntest_fails if 1 == 2\n\ntest_passes if 1 == 1\n"})
	results, err := policy.RunTests(context.Background(), policy.TestOptions{Dirs: []string{dir}, NoDefaults: true})
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, r := range results {
		failed[r.Name] = r.Failed()
	}
	if len(failed) != 2 || !failed["test_fails"] || failed["test_passes"] {
		t.Fatalf("results %v, want test_fails failed and test_passes passed", failed)
	}
}

func TestUserPolicyAndData(t *testing.T) {
	e := engine(t, policy.Options{PolicyDirs: []string{"../testdata/policies/example"}})
	in := policy.Input{Action: "put", Key: "sources/0/0", Path: "s3://b/q1/sources/0/0", Root: "s3://b/q1", Cond: "if-absent",
		Size: 2 << 20, Principal: policy.Principal{ID: "svc", Kind: policy.KindJob}, Checkpoint: policy.Facts{QueryID: "q1"}}
	d := e.Decide(context.Background(), in)
	if d.Allow || !slices.Equal(d.Rules(), []string{"EXAMPLE-001"}) {
		t.Fatalf("decision %+v, want a denial by EXAMPLE-001", d)
	}
	in.Size = 10
	if d := e.Decide(context.Background(), in); !d.Allow {
		t.Fatalf("small put: %+v", d)
	}
	// Without the user policy the large put passes.
	in.Size = 2 << 20
	if d := engine(t, policy.Options{}).Decide(context.Background(), in); !d.Allow {
		t.Fatalf("defaults alone: %+v", d)
	}
}

func TestDataFileKnownQueries(t *testing.T) {
	dir := writeFiles(t, map[string]string{"queries.json": `{"ckgate": {"queries": [{"query_id": "q1", "root": "s3://b/team/q1"}]}}`})
	e := engine(t, policy.Options{DataFiles: []string{filepath.Join(dir, "queries.json")}})
	in := policy.Input{Action: "open", Root: "s3://b/team", Principal: policy.Principal{ID: "svc", Kind: policy.KindJob},
		Checkpoint: policy.Facts{QueryID: "q2"}}
	if d := e.Decide(context.Background(), in); !slices.Equal(d.Rules(), []string{"CKG-P011"}) {
		t.Fatalf("decision %+v, want CKG-P011", d)
	}
}

func TestDataConflictNamesPath(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.json": `{"ckgate": {"queries": []}}`,
		"b.yaml": "ckgate:\n  queries: [1]\n",
	})
	_, err := policy.New(context.Background(), policy.Options{DataFiles: []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.yaml")}})
	if err == nil || !strings.Contains(err.Error(), "data.ckgate.queries") {
		t.Fatalf("err = %v, want a conflict on data.ckgate.queries", err)
	}
}

func TestLoadErrors(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"syntax":       {"x.rego": "package x\n\nallow if {\n"},
		"compile":      {"x.rego": "package x\n\nallow if undefined_function(1)\n"},
		"rego in data": {"x.rego": "package x\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, files)
			o := policy.Options{PolicyDirs: []string{dir}}
			if name == "rego in data" {
				o = policy.Options{DataFiles: []string{filepath.Join(dir, "x.rego")}}
			}
			_, err := policy.New(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), "x.rego") {
				t.Fatalf("err = %v, want one naming x.rego", err)
			}
		})
	}
	if _, err := policy.New(context.Background(), policy.Options{NoDefaults: true}); err == nil {
		t.Fatal("an engine without modules was built")
	}
}

// TestFailClosed: an evaluation error, an undefined decision or a malformed
// one denies by CKG-P000.
func TestFailClosed(t *testing.T) {
	in := policy.Input{Action: "put", Key: "k", Path: "r/k", Root: "r", Cond: "none",
		Principal: policy.Principal{ID: "svc", Kind: policy.KindJob}}
	for name, tc := range map[string]struct {
		files      map[string]string
		noDefaults bool
		wantErr    error
	}{
		"builtin error": {files: map[string]string{"boom.rego": `package ckgate.gateway.rules.boom

deny contains {"id": "BOOM", "severity": "deny", "msg": sprintf("%d", [to_number(input.key)])} if true
`}},
		"conflicting values": {files: map[string]string{"twice.rego": `package ckgate.gateway.rules.twice

x := 1 if input.action == "put"

x := 2 if input.key == "k"

deny contains {"id": "T", "severity": "deny", "msg": "m"} if x == 3
`}},
		"undefined":            {noDefaults: true, wantErr: policy.ErrUndefined, files: map[string]string{"empty.rego": "package ckgate.gateway\n\ndecision := 1 if false\n"}},
		"malformed":            {noDefaults: true, files: map[string]string{"bad.rego": "package ckgate.gateway\n\ndecision := {\"allow\": \"yes\"}\n"}},
		"allow with denials":   {noDefaults: true, files: map[string]string{"bad.rego": "package ckgate.gateway\n\ndecision := {\"allow\": true, \"deny\": [{\"id\": \"X\", \"msg\": \"m\"}]}\n"}},
		"denial without rule":  {noDefaults: true, files: map[string]string{"bad.rego": "package ckgate.gateway\n\ndecision := {\"allow\": false}\n"}},
		"not an object":        {noDefaults: true, files: map[string]string{"bad.rego": "package ckgate.gateway\n\ndecision := 5\n"}},
		"deny not a set":       {noDefaults: true, files: map[string]string{"bad.rego": "package ckgate.gateway\n\ndecision := {\"allow\": false, \"deny\": \"no\"}\n"}},
		"violation a string":   {noDefaults: true, files: map[string]string{"bad.rego": "package ckgate.gateway\n\ndecision := {\"allow\": false, \"deny\": [\"no\"]}\n"}},
		"violation without id": {noDefaults: true, files: map[string]string{"bad.rego": "package ckgate.gateway\n\ndecision := {\"allow\": true, \"overridden\": [{\"msg\": \"m\"}]}\n"}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			e := engine(t, policy.Options{PolicyDirs: []string{dir}, NoDefaults: tc.noDefaults})
			d := e.Decide(context.Background(), in)
			if d.Allow || len(d.Deny) != 1 || d.Deny[0].ID != policy.RuleFailClosed {
				t.Fatalf("decision %+v, want a fail-closed denial", d)
			}
			if tc.wantErr != nil && !errors.Is(d.Err, tc.wantErr) {
				t.Fatalf("err %v, want %v", d.Err, tc.wantErr)
			}
		})
	}
}

func TestCancelledContextDenies(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := engine(t, policy.Options{}).Decide(ctx, policy.Input{Action: "put", Key: "k", Path: "r/k", Root: "r", Cond: "none",
		Principal: policy.Principal{ID: "svc", Kind: policy.KindJob}})
	if d.Allow || d.Err == nil {
		t.Fatalf("decision under a cancelled context: %+v", d)
	}
}

// TestRegoFormatted: every Rego file (defaults and testdata) is as `opa fmt`
// writes it, in Rego v1.
func TestRegoFormatted(t *testing.T) {
	var files []string
	for _, root := range []string{"rego", "../testdata/policies"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".rego") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 10 {
		t.Fatalf("%d Rego files", len(files))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := format.SourceWithOpts(f, src, format.Opts{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if !bytes.Equal(got, src) {
			t.Errorf("%s is not formatted: run opa fmt -w (or format.Source)", f)
		}
	}
}

// Known queries' roots are canonical locations: a malformed one is refused
// when the data loads, and every spelling of one root is that root.
func TestEngineRefusesMalformedKnownQueries(t *testing.T) {
	ctx := context.Background()
	for _, qs := range []any{
		[]any{map[string]any{"query_id": "q", "root": 5}},
		[]any{map[string]any{"query_id": "q", "root": []any{"s3://b/x"}}},
		[]any{map[string]any{"query_id": "q"}},
		[]any{map[string]any{"query_id": "q", "root": "ftp://x/y"}},
		"not a list",
	} {
		if _, err := policy.New(ctx, policy.Options{Data: map[string]any{"ckgate": map[string]any{"queries": qs}}}); err == nil {
			t.Errorf("queries %v: loaded", qs)
		}
	}
}

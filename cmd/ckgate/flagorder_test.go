package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestOrderArgs(t *testing.T) {
	app := App(Options{})
	for _, tc := range []struct{ in, want string }{
		{"inspect URL --format json", "inspect --format json URL"},
		{"inspect URL --log-level debug", "--log-level debug inspect URL"},
		{"inspect URL --log-level=debug --format=json", "--log-level=debug inspect --format=json URL"},
		{"store --log-level debug ls URL", "--log-level debug store ls URL"},
		{"store ls URL -r PREFIX", "store ls -r URL PREFIX"},
		{"store ls URL --recursive=false PREFIX", "store ls --recursive=false URL PREFIX"},
		{"store put - URL KEY --overwrite", "store put --overwrite - URL KEY"},
		{"store rm URL -- --if-match", "store rm -- URL --if-match"},
		{"store rm URL KEY --if-match -v1", "store rm --if-match -v1 URL KEY"},
		{"policy eval - --data a --policy p --data b", "policy eval --data a --policy p --data b -"},
		{"compat URL --bogus", "compat --bogus URL"},
		{"store ls URL --help", "store ls --help"},
		{"store ls URL -- --help", "store ls -- URL --help"},
		{"--log-level debug store ls URL", "--log-level debug store ls URL"},
		{"help store", "help store"},
	} {
		got := strings.Join(orderArgs(app, append([]string{"ckgate"}, strings.Fields(tc.in)...))[1:], " ")
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// TestFlagsAnywhere runs commands with their flags, and the global
// --log-level, after the arguments.
func TestFlagsAnywhere(t *testing.T) {
	root := newRoot(t)
	in := writeFile(t, "v1")
	ckgate(t, Options{}, "", "store", "mb", root, "--log-level", "off").want(t, 0)
	ckgate(t, Options{}, "", "store", "put", in, root, "a/k").want(t, 0)
	ckgate(t, Options{}, "v2", "store", "put", "-", root, "a/k", "--overwrite").want(t, 0)
	ckgate(t, Options{}, "", "store", "cat", root, "a/k", "--log-level", "debug").want(t, 0, "v2")
	if r := ckgate(t, Options{}, "", "store", "cat", root, "a/k", "--log-level", "debug"); !strings.Contains(r.stderr, "store request") {
		t.Fatalf("--log-level after the arguments: no debug log\n%s", r.stderr)
	}

	// "--" ends the flags: a key named --x
	ckgate(t, Options{}, "dash", "store", "put", "-", root, "--", "--x").want(t, 0)
	ckgate(t, Options{}, "", "store", "cat", root, "--", "--x").want(t, 0, "dash")

	// a bool flag followed by an argument; --flag=value
	ls := ckgate(t, Options{}, "", "store", "ls", root, "-r", "a/", "--format=json")
	ls.want(t, 0)
	var entries []struct{ Key, Version string }
	if err := json.Unmarshal([]byte(ls.stdout), &entries); err != nil || len(entries) != 1 || entries[0].Key != "a/k" {
		t.Fatalf("ls -r a/ --format=json: %v\n%s", err, ls.stdout)
	}
	ckgate(t, Options{}, "", "store", "rm", root, "a/k", "--if-match", entries[0].Version).want(t, 0)
	ckgate(t, Options{}, "", "store", "rm", root, "--", "--x").want(t, 0)

	// an unknown flag after the arguments is still refused
	ckgate(t, Options{}, "", "store", "ls", root, "--bogus").wantErr(t, 2, "bogus", "Run 'ckgate store ls --help'")
	ckgate(t, Options{}, "", "store", "put", in, root, "k", "--overwrite", "--bogus=1").wantErr(t, 2, "bogus")
	// --help after the arguments shows the help
	ckgate(t, Options{}, "", "store", "ls", root, "--help").want(t, 0, "EXIT STATUS:")
}

func TestFlagsAnywhereReports(t *testing.T) {
	cp := filepath.Join(sparkTestdata, "checkpoint-version-3.3.0-streaming-deduplication")
	plan := filepath.Join(plansTestdata, "spark-3.3.0-dedup.json")
	r := ckgate(t, Options{}, "", "inspect", cp, "--format", "json", "--log-level", "debug")
	r.want(t, 0)
	inspectJSON(t, r)
	if !strings.Contains(r.stderr, "store request") {
		t.Fatalf("inspect URL --log-level debug: no debug log\n%s", r.stderr)
	}
	ckgate(t, Options{}, "", "compat", cp, "--plan", plan).want(t, 0, "COMPATIBLE")
	if r := ckgate(t, Options{}, "", "compat", cp, "--plan", plan, "--format=json"); !json.Valid([]byte(r.stdout)) {
		t.Fatalf("compat --format=json after URL: %d %s %s", r.code, r.stdout, r.stderr)
	}

	dir := copyTree(t, "checkpoint-version-4.0.0/hdfs/agg")
	r = ckgate(t, Options{}, "", "retention", "plan", dir, "--min-batches", "2", "--format", "json")
	r.want(t, 0)
	if !json.Valid([]byte(r.stdout)) {
		t.Fatalf("retention plan: %s", r.stdout)
	}

	// policy eval: a repeated slice flag after the argument; the second
	// --data is read (it conflicts with the example's data)
	big := `{"action":"put","key":"sources/0/0","size":5000000,"cond":"if-absent","root":"s3://b/q1","writer_session":true,"principal":{"id":"svc","kind":"job"}}`
	const example = "../../testdata/policies/example"
	other := writeFile(t, `{"other": 1}`)
	limit := filepath.Join(t.TempDir(), "limit.json")
	if err := os.WriteFile(limit, []byte(`{"example": {"max_bytes": 1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, big, "policy", "eval", "-", "--policy", example).wantErr(t, 4, "EXAMPLE-001")
	ckgate(t, Options{}, big, "policy", "eval", "-", "--policy", example, "--data", other).wantErr(t, 4, "EXAMPLE-001")
	ckgate(t, Options{}, big, "policy", "eval", "-", "--policy", example, "--data", other, "--data", limit).wantErr(t, 2, "limit.json")
}

func TestFlagsAnywhereRun(t *testing.T) {
	dir := t.TempDir()
	sp := filesQuery(t, dir, 0, 3)
	runCLI(t, dir, "run", sp, "--checkpoint", "ck", "--available-now", "--format", "json").want(t, 0)
	if _, err := os.Stat(filepath.Join(dir, "ck", "metadata")); err != nil {
		t.Fatalf("run SPEC --checkpoint URL: %v", err)
	}
	if rows := outputRows(t, dir); !slices.Equal(rows, []int{0, 1, 2}) {
		t.Fatalf("rows %v", rows)
	}
}

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestEveryFormatHasJSON: every command with --format has --json, and its
// help names both text and table.
func TestEveryFormatHasJSON(t *testing.T) {
	var walk func(cmds []*cli.Command)
	n := 0
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			walk(c.Subcommands)
			f, ok := findFlag(c.Flags, "format").(*cli.StringFlag)
			if !ok {
				continue
			}
			n++
			if findFlag(c.Flags, "json") == nil {
				t.Errorf("%s: --format without --json", c.Name)
			}
			if !strings.Contains(f.Usage, "text") || !strings.Contains(f.Usage, "table") {
				t.Errorf("%s: --format usage %q names not both text and table", c.Name, f.Usage)
			}
		}
	}
	walk(App(Options{}).Commands)
	if n < 10 {
		t.Fatalf("%d commands with --format", n)
	}
}

// TestFormatNames: text and table are one format, --json is --format json.
func TestFormatNames(t *testing.T) {
	root := newRoot(t)
	ckgate(t, Options{}, "x", "store", "mb", root).want(t, 0)
	ckgate(t, Options{}, "x", "store", "put", "-", root, "offsets/0").want(t, 0)
	cp := filepath.Join(sparkTestdata, "checkpoint-version-3.3.0-streaming-deduplication")
	plan := filepath.Join(plansTestdata, "spark-3.3.0-dedup.json")
	allow := `{"action":"put","key":"offsets/3","cond":"if-absent","root":"s3://b/q1","writer_session":true,"principal":{"id":"svc","kind":"job"}}`
	for _, tc := range []struct {
		name, stdin string
		args        []string
		text        string // in the table output
	}{
		{"store ls", "", []string{"store", "ls", "-r", root}, "offsets/0"},
		{"inspect", "", []string{"inspect", cp}, "BATCHES"},
		{"compat", "", []string{"compat", "--plan", plan, cp}, "VERDICT"},
		{"retention plan", "", []string{"retention", "plan", cp}, "retain"},
		{"policy rules", "", []string{"policy", "rules"}, "CKG-P002"},
		{"policy eval", allow, []string{"policy", "eval", "-"}, "allow"},
		{"audit", "", []string{"audit", cp}, "1 checkpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := ckgate(t, Options{}, tc.stdin, tc.args...)
			table.want(t, 0, tc.text)
			for _, f := range []string{"text", "table"} {
				r := ckgate(t, Options{}, tc.stdin, append(tc.args, "--format", f)...)
				r.want(t, 0, tc.text)
				if r.stdout != table.stdout && tc.name != "audit" {
					t.Fatalf("--format %s differs from the default:\n%s\n%s", f, r.stdout, table.stdout)
				}
			}
			js := ckgate(t, Options{}, tc.stdin, append(tc.args, "--format", "json")...)
			js.want(t, 0)
			short := ckgate(t, Options{}, tc.stdin, append(tc.args, "--json")...)
			short.want(t, 0)
			if !json.Valid([]byte(short.stdout)) || !json.Valid([]byte(js.stdout)) {
				t.Fatalf("--json:\n%s\n--format json:\n%s", short.stdout, js.stdout)
			}
			ckgate(t, Options{}, tc.stdin, append(tc.args, "--json", "--format", "table")...).wantErr(t, 2, "--json and --format table")
			ckgate(t, Options{}, tc.stdin, append(tc.args, "--json", "--format", "json")...).want(t, 0)
			ckgate(t, Options{}, tc.stdin, append(tc.args, "--format", "xml")...).wantErr(t, 2, "table (or text)")
		})
	}
}

// TestRunFormatTable: run's progress format is text, and table is its
// synonym; --json is --format json.
func TestRunFormatTable(t *testing.T) {
	dir := t.TempDir()
	sp := filesQuery(t, dir, 0, 2)
	r := runCLI(t, dir, "run", "--format", "table", "--checkpoint", "ck", "--available-now", sp)
	r.want(t, 0)
	if json.Valid([]byte(strings.SplitN(r.stdout, "\n", 2)[0])) {
		t.Fatalf("--format table printed JSON:\n%s", r.stdout)
	}
	filesQuery(t, dir, 2, 3)
	r = runCLI(t, dir, "run", "--json", "--checkpoint", "ck", "--available-now", sp)
	r.want(t, 0)
	if !json.Valid([]byte(strings.SplitN(r.stdout, "\n", 2)[0])) {
		t.Fatalf("--json printed no JSON:\n%s", r.stdout)
	}
	runCLI(t, dir, "run", "--format", "xml", sp).wantErr(t, 2, "text (or table) or json")
}

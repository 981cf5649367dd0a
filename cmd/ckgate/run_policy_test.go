package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A checkpoint root that is another known query's root is refused before
// anything is written: no metadata, no writer record, no output.
func TestRunRefusesSharedCheckpointRoot(t *testing.T) {
	dir, sp := demoDir(t)
	ck := filepath.Join(dir, "demo", "checkpoint")
	data := filepath.Join(dir, "queries.json")
	for _, root := range []string{"file://" + ck, "file://" + filepath.Join(dir, "demo")} { // equal to, and above
		os.WriteFile(data, []byte(`{"ckgate": {"queries": [{"query_id": "orders-v1", "root": "`+root+`"}]}}`), 0o644)
		r := runCLI(t, dir, "run", "--format", "json", "--data", data, "--checkpoint", "demo/checkpoint", "--available-now", sp)
		r.wantErr(t, 4, "CKG-P011", "orders-v1")
		if got := listTree(t, ck); len(got) != 0 {
			t.Fatalf("refused run wrote %v", got)
		}
		if got := listTree(t, filepath.Join(dir, "demo", "out")); len(got) != 0 {
			t.Fatalf("refused run wrote output %v", got)
		}
	}
	// the same query's own root is not a conflict: a run, then the known
	// query is this checkpoint's id
	r := runCLI(t, dir, "run", "--format", "json", "--checkpoint", "demo/checkpoint", "--available-now", sp)
	r.want(t, 0)
	md, err := os.ReadFile(filepath.Join(ck, "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ ID string }
	json.Unmarshal(md, &m)
	os.WriteFile(data, []byte(`{"ckgate": {"queries": [{"query_id": "`+m.ID+`", "root": "file://`+ck+`"}]}}`), 0o644)
	runCLI(t, dir, "run", "--format", "json", "--data", data, "--checkpoint", "demo/checkpoint", "--available-now", sp).want(t, 0)
}

// denyPuts writes dir/policy/RULES.rego: package rules denies, as rule id
// (name), every put whose path holds part, with the message "msg: PATH".
// It returns the policy directory.
func denyPuts(t *testing.T, dir, rules, id, name, msg, part string) string {
	t.Helper()
	return userPolicy(t, dir, rules+".rego", fmt.Sprintf(`package ckgate.gateway.rules.%s

deny contains {"id": %q, "name": %q, "severity": "deny", "msg": sprintf("%s: %%s", [input.path])} if {
	input.action == "put"
	contains(input.path, %q)
}
`, rules, id, name, msg, part))
}

// A user policy that refuses the commit log stops the run at the first
// commit with exit 4 naming the rule; the decision log records every
// decision; without the policy the next run finishes the batch and the
// output equals a run that was never refused.
func TestRunWritesOnlyWhatThePolicyAllows(t *testing.T) {
	dir, sp := demoDir(t)
	pol := denyPuts(t, dir, "freeze", "ORG-001", "commit-freeze", "commits are frozen", "/commits/")
	dlog := filepath.Join(dir, "decisions.jsonl")
	r := runCLI(t, dir, "run", "--format", "json", "--policy", pol, "--decision-log", dlog, "--checkpoint", "demo/checkpoint", "--available-now", sp)
	r.wantErr(t, 4, "ORG-001", "commits are frozen")
	ck := filepath.Join(dir, "demo", "checkpoint")
	if _, err := os.Stat(filepath.Join(ck, "offsets", "0")); err != nil {
		t.Fatalf("offsets/0 should be written before the refused commit: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ck, "commits", "0")); !os.IsNotExist(err) {
		t.Fatalf("commits/0 exists after a refusal: %v", err)
	}
	f, err := os.Open(dlog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	results := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			Result, Key, Action string
			Rules               []string
			Principal           struct{ Kind string }
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("decision log line %q: %v", sc.Text(), err)
		}
		if rec.Principal.Kind != "job" {
			t.Fatalf("decision for principal kind %q, want job", rec.Principal.Kind)
		}
		results[rec.Result]++
		if rec.Result == "deny" && (rec.Key != "commits/0" || strings.Join(rec.Rules, ",") != "ORG-001") {
			t.Fatalf("denied %s by %v, want commits/0 by ORG-001", rec.Key, rec.Rules)
		}
	}
	if results["deny"] != 1 || results["allow"] < 3 {
		t.Fatalf("decision log: %v, want 1 deny and the allowed writes before it", results)
	}

	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "demo/checkpoint", "--available-now", sp).want(t, 0)
	refDir, refSpec := demoDir(t)
	runCLI(t, refDir, "run", "--format", "json", "--checkpoint", "demo/checkpoint", "--available-now", refSpec).want(t, 0)
	got, want := sinkLines(t, filepath.Join(dir, "demo", "out")), sinkLines(t, filepath.Join(refDir, "demo", "out"))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		for i := range got {
			if got[i] != want[i] {
				t.Logf("first difference: %s\nwant %s", got[i], want[i])
				break
			}
		}
		t.Fatalf("output after the refused run differs from a clean run: %d rows, want %d", len(got), len(want))
	}
}

// sinkLines returns the sorted data lines of a files sink (manifests left out).
func sinkLines(t *testing.T, dir string) []string {
	t.Helper()
	var lines []string
	for _, rel := range listTree(t, dir) {
		// what Spark's readers skip: _spark_metadata, the owner log
		if strings.HasPrefix(rel, "_") || strings.Contains(rel, "/_") || strings.HasPrefix(filepath.Base(rel), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	slices.Sort(lines)
	return lines
}

// The sink's writes are decided too: a policy that refuses the output
// directory stops the run before any output file exists.
func TestRunSinkWritesAreDecided(t *testing.T) {
	dir, sp := demoDir(t)
	pol := denyPuts(t, dir, "outfreeze", "ORG-002", "output-freeze", "output is frozen", "/demo/out/")
	r := runCLI(t, dir, "run", "--format", "json", "--policy", pol, "--checkpoint", "demo/checkpoint", "--available-now", sp)
	r.wantErr(t, 4, "ORG-002", "output is frozen")
	if got := listTree(t, filepath.Join(dir, "demo", "out")); len(got) != 0 {
		t.Fatalf("refused sink wrote %v", got)
	}
}

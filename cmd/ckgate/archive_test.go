package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/lifecycle"
)

func TestArchiveCommand(t *testing.T) {
	src := filepath.Join(t.TempDir(), "ck")
	if err := os.CopyFS(src, os.DirFS("../../testdata/spark/checkpoint-version-3.2.0-streaming-aggregate-with-repartition")); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "archive")
	dlog := filepath.Join(t.TempDir(), "decisions.jsonl")
	o := Options{}
	ckgate(t, o, "", "archive", src).wantErr(t, 2, "want URL DEST")
	ckgate(t, o, "", "archive", "--fresh-start", src, dest).wantErr(t, 2, "--reason")
	ckgate(t, o, "", "archive", src, src).wantErr(t, 2, "same location")
	ckgate(t, o, "", "archive", t.TempDir(), dest).wantErr(t, 2, "not a checkpoint")
	ckgate(t, o, "", "archive", "--principal", "alice", "--decision-log", dlog, src, dest).want(t, 0, "verified", "manifest _ckgate/archive-manifest.json")
	if _, err := os.Stat(filepath.Join(src, filepath.FromSlash(lifecycle.ArchivedKey))); !os.IsNotExist(err) {
		t.Fatalf("a plain archive marked the source: %v", err)
	}
	// A second archive to the same DEST is refused.
	ckgate(t, o, "", "archive", src, dest).wantErr(t, 3, "not empty")

	dest2 := filepath.Join(t.TempDir(), "archive2")
	newRoot := filepath.Join(t.TempDir(), "q1-v2")
	ckgate(t, o, "", "archive", "--new", newRoot, src, dest2).wantErr(t, 2, "--new needs --fresh-start")
	ckgate(t, o, "", "archive", "--fresh-start", "--reason", "r", "--new", dest, src, dest2).wantErr(t, 3, "empty root")
	r := ckgate(t, o, "", "archive", "--fresh-start", "--reason", "INC-9 topic recreated", "--principal", "alice",
		"--decision-log", dlog, "--format", "json", "--new", newRoot, src, dest2)
	r.want(t, 0)
	var sum archiveJSON
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.Verified || sum.Marker == nil || sum.Marker.Reason != "INC-9 topic recreated" || sum.Marker.Principal.ID != "alice" || sum.Marker.ArchivedTo != dest2 || sum.Marker.NewRoot != newRoot {
		t.Fatalf("summary %+v", sum)
	}
	b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(lifecycle.ArchivedKey)))
	if err != nil || !strings.Contains(string(b), dest2) || !strings.Contains(string(b), "INC-9") {
		t.Fatalf("marker %s %v", b, err)
	}
	// Every write was decided and logged, the marker included.
	lb, err := os.ReadFile(dlog)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(lb), `"archived.json`) && !strings.Contains(string(lb), "_ckgate/archived.json") {
		t.Fatalf("decision log lacks the marker:\n%s", lb)
	}
	if n := strings.Count(string(lb), "\n"); n < sum.Files*2 {
		t.Fatalf("decision log holds %d decisions, want one per write (%d files, twice)", n, sum.Files)
	}
	// The root was archived for a fresh start: a second one is refused.
	ckgate(t, o, "", "archive", "--fresh-start", "--reason", "again", src, filepath.Join(t.TempDir(), "a3")).wantErr(t, 3, "already archived")
}

// The marker is a policy decision: a rule refusing it stops the fresh start
// (exit 4) after the verified copy, and the old checkpoint stays unmarked.
func TestArchiveFreshStartDenied(t *testing.T) {
	src := filepath.Join(t.TempDir(), "ck")
	if err := os.CopyFS(src, os.DirFS("../../testdata/spark/checkpoint-version-3.2.0-streaming-aggregate-with-repartition")); err != nil {
		t.Fatal(err)
	}
	pol := t.TempDir()
	rule := `package ckgate.gateway.rules.no_fresh_start

import data.ckgate.lib

deny contains lib.violation("ORG-001", "fresh starts need a change ticket") if {
	input.action == "put"
	endswith(input.path, "/_ckgate/archived.json")
}
`
	if err := os.WriteFile(filepath.Join(pol, "no_fresh_start.rego"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "archive")
	ckgate(t, Options{}, "", "archive", "--policy", pol, "--fresh-start", "--reason", "x", src, dest).wantErr(t, 4, "ORG-001")
	if _, err := os.Stat(filepath.Join(src, filepath.FromSlash(lifecycle.ArchivedKey))); !os.IsNotExist(err) {
		t.Fatalf("a denied fresh start marked the source: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dest, filepath.FromSlash(lifecycle.ManifestKey))); err != nil {
		t.Fatalf("the verified copy should be kept: %v", err)
	}
}

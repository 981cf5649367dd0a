package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/source"
	"github.com/ckgate/ckgate/lifecycle"
)

func TestFreshStartCommand(t *testing.T) {
	src := filepath.Join(t.TempDir(), "ck")
	if err := os.CopyFS(src, os.DirFS("../../testdata/spark/checkpoint-version-3.2.0-streaming-aggregate-with-repartition")); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "archive")
	newRoot := filepath.Join(t.TempDir(), "q1-v2")
	o := Options{}
	ckgate(t, o, "", "fresh-start", src).wantErr(t, 2, "--new")
	ckgate(t, o, "", "fresh-start", "--new", newRoot, "--archive-to", dest, src).wantErr(t, 2, "--reason")
	ckgate(t, o, "", "fresh-start", "--new", newRoot, "--archive-to", dest, "--reason", "r", src).wantErr(t, 2, "one boundary")
	ckgate(t, o, "", "fresh-start", "--new", newRoot, "--archive-to", dest, "--reason", "r", "--from-offsets", "{}", "--from-timestamp", "2026-11-30T00:00:00Z", src).wantErr(t, 2, "one boundary")
	ckgate(t, o, "", "fresh-start", "--new", newRoot, "--archive-to", dest, "--reason", "r", "--from-offsets", "nope", src).wantErr(t, 2, "--from-offsets")
	ckgate(t, o, "", "fresh-start", "--new", newRoot, "--archive-to", dest, "--reason", "r", "--from-timestamp", "2026-11-30T00:00:00Z", src).wantErr(t, 2, "--brokers")
	ckgate(t, o, "", "fresh-start", "--new", src, "--archive-to", dest, "--reason", "r", "--from-offsets", `{"clicks":{"0":5}}`, src).wantErr(t, 2, "different locations")
	if _, err := os.Stat(filepath.Join(src, filepath.FromSlash(lifecycle.ArchivedKey))); !os.IsNotExist(err) {
		t.Fatalf("a refused fresh start marked the source: %v", err)
	}

	r := ckgate(t, o, "", "fresh-start", "--new", newRoot, "--archive-to", dest, "--reason", "INC-12 poison record",
		"--principal", "alice", "--format", "json", "--from-offsets", `{"clicks":{"0":5,"1":7}}`, src)
	r.want(t, 0)
	var out struct {
		Migration lifecycle.MigrationRecord `json:"migration"`
		Steps     []string                  `json:"steps"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if m := out.Migration; m.OldRoot != src || m.NewRoot != newRoot || m.ArchivedTo != dest || m.Principal.ID != "alice" ||
		m.Boundary.Kafka["clicks"][1] != 7 || len(out.Steps) == 0 {
		t.Fatalf("summary %+v", out)
	}
	start, err := os.ReadFile(filepath.Join(newRoot, filepath.FromSlash(source.StartKey)))
	if err != nil {
		t.Fatal(err)
	}
	var sp source.StartPoint
	if err := json.Unmarshal(start, &sp); err != nil || sp.Kafka["clicks"][0] != 5 || sp.Kafka["clicks"][1] != 7 {
		t.Fatalf("start point %s, %v", start, err)
	}
	for _, p := range []string{filepath.Join(src, lifecycle.MigratedToKey), filepath.Join(newRoot, lifecycle.MigratedFromKey)} {
		if b, err := os.ReadFile(filepath.FromSlash(p)); err != nil || !strings.Contains(string(b), "INC-12") {
			t.Fatalf("%s: %s %v", p, b, err)
		}
	}
	// The old root is refused by run (exit 3, naming the new root) and by
	// a second fresh start.
	spec := filepath.Join(t.TempDir(), "q.yaml")
	if err := os.WriteFile(spec, []byte("name: q\nsource: {kind: kafka, brokers: [127.0.0.1:1], topic: clicks}\nsink: {kind: files, path: out}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ckgate(t, o, "", "run", "--checkpoint", src, spec).wantErr(t, 3, "archived", newRoot)
	ckgate(t, o, "", "fresh-start", "--new", filepath.Join(t.TempDir(), "v3"), "--archive-to", filepath.Join(t.TempDir(), "a2"),
		"--reason", "again", "--from-offsets", `{"clicks":{"0":5}}`, src).wantErr(t, 3, "archived for a fresh start")
}

// A files query has no Kafka boundary: its fresh start is refused.
func TestFreshStartCommandFilesSource(t *testing.T) {
	dir, sp := demoDir(t)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "demo/checkpoint", "--available-now", sp).want(t, 0)
	runCLI(t, dir, "fresh-start", "--new", "v2", "--archive-to", "arch", "--reason", "r", "--from-offsets", `{"clicks":{"0":5}}`, "demo/checkpoint").
		wantErr(t, 2, "files source")
	if _, err := os.Stat(filepath.Join(dir, "demo", "checkpoint", filepath.FromSlash(lifecycle.ArchivedKey))); !os.IsNotExist(err) {
		t.Fatalf("a refused fresh start marked the source: %v", err)
	}
}

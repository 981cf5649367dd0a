package main

import (
	"encoding/json"
	"fmt"
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

// TestFreshStartCommandFilesSource: a files query is fresh-started at a
// batch of its old checkpoint (the files that batch's source log recorded
// are carried over as processed); the new root processes only the files
// after it; the old root is archived, kept and refused by run.
func TestFreshStartCommandFilesSource(t *testing.T) {
	dir := t.TempDir()
	sp := filesQuery(t, dir, 0, 8)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck", "--available-now", sp).want(t, 0)
	filesQuery(t, dir, 8, 10)
	// Kafka flags and boundaries are refused for a files source.
	runCLI(t, dir, "fresh-start", "--new", "ck2", "--archive-to", "arch", "--reason", "r", "--from-offsets", `{"clicks":{"0":5}}`, "ck").
		wantErr(t, 2, "files source")
	runCLI(t, dir, "fresh-start", "--new", "ck2", "--archive-to", "arch", "--reason", "r", "--from-timestamp", "2026-11-30T00:00:00Z",
		"--brokers", "127.0.0.1:1", "ck").wantErr(t, 2, "--brokers")
	runCLI(t, dir, "fresh-start", "--new", "ck2", "--archive-to", "arch", "--reason", "r", "--from-offsets", `{"batch":40}`, "ck").
		wantErr(t, 2, "offsets/40")
	if _, err := os.Stat(filepath.Join(dir, "ck", filepath.FromSlash(lifecycle.ArchivedKey))); !os.IsNotExist(err) {
		t.Fatalf("a refused fresh start marked the source: %v", err)
	}
	before := treeOf(t, filepath.Join(dir, "ck"))

	// Batch 5 read f-005 (one file a batch): f-000 … f-005 are processed.
	r := runCLI(t, dir, "fresh-start", "--new", "ck2", "--archive-to", "arch", "--reason", "INC-7 bad deploy", "--principal", "bob",
		"--from-offsets", `{"batch":5}`, "ck")
	r.want(t, 0, "archived ck", "other than the 6 the old file source log recorded up to log offset 5", "migrated-from.json", "left to you")
	after := treeOf(t, filepath.Join(dir, "ck"))
	for _, k := range []string{lifecycle.ArchivedKey, lifecycle.MigratedToKey} {
		if _, ok := after[k]; !ok {
			t.Fatalf("old root lacks %s", k)
		}
		delete(after, k)
	}
	if len(after) != len(before) {
		t.Fatalf("the old root changed beyond the markers: %d keys, was %d", len(after), len(before))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("the old root's %s changed", k)
		}
	}
	var sp2 source.StartPoint
	if err := json.Unmarshal([]byte(treeOf(t, filepath.Join(dir, "ck2"))[source.StartKey]), &sp2); err != nil || sp2.Files == nil ||
		len(sp2.Files.Processed) != 6 || *sp2.Files.FromLogOffset != 5 {
		t.Fatalf("start point %+v, %v", sp2.Files, err)
	}
	for _, p := range []string{filepath.Join(dir, "ck", lifecycle.MigratedToKey), filepath.Join(dir, "ck2", lifecycle.MigratedFromKey)} {
		if b, err := os.ReadFile(filepath.FromSlash(p)); err != nil || !strings.Contains(string(b), "INC-7") || !strings.Contains(string(b), `"processed"`) {
			t.Fatalf("%s: %s %v", p, b, err)
		}
	}
	// The new root, into an isolated output: f-006 … f-009 only.
	spec2 := filepath.Join(dir, "q2.yaml")
	if err := os.WriteFile(spec2, []byte("name: q\nsource: {kind: files, path: in, max_files_per_batch: 1}\nsink: {kind: files, path: out2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck2", "--available-now", spec2).want(t, 0)
	if got := outputRowsIn(t, dir, "out2"); fmt.Sprint(got) != "[6 7 8 9]" {
		t.Fatalf("new root output %v, want [6 7 8 9]", got)
	}
	runCLI(t, dir, "run", "--checkpoint", "ck", "--available-now", sp).wantErr(t, 3, "archived", "ck2")
	// A timestamp boundary needs no brokers for a files source.
	runCLI(t, dir, "fresh-start", "--new", "ck3", "--archive-to", "arch2", "--reason", "r", "--from-timestamp", "2026-11-30T00:00:00Z", "ck2").
		want(t, 0, "modified at or after 2026-11-30T00:00:00Z")
}

// treeOf maps every file under root (slash keys) to its content.
func treeOf(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		m[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

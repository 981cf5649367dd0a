package lifecycle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/source"
	"github.com/ckgate/ckgate/lifecycle"
)

// writeInputs writes in/f-<i>.jsonl for i in [from, to), each one row
// {"i":i}, modified at mod.
func writeInputs(t *testing.T, in string, from, to int, mod time.Time) {
	t.Helper()
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := from; i < to; i++ {
		p := filepath.Join(in, fmt.Sprintf("f-%03d.jsonl", i))
		if err := os.WriteFile(p, fmt.Appendf(nil, `{"i":%d}`+"\n", i), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
}

// runFiles runs the files query over in into out on the checkpoint ck
// until no input is left.
func runFiles(t *testing.T, ck, in, out string) []engine.Progress {
	t.Helper()
	return runSpec(t, fmt.Sprintf("name: f\nsource: {kind: files, path: %s, max_files_per_batch: 2}\nsink: {kind: files, path: %s}\n", in, out), ck)
}

// rowsOf returns the "i" of every row the files sink wrote under out.
func rowsOf(t *testing.T, out string) []int {
	t.Helper()
	var got []int
	for _, r := range sinkRows[struct{ I int }](t, out) {
		got = append(got, r.I)
	}
	slices.Sort(got)
	return got
}

func span(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// TestFreshStartFiles: a files query runs on root A; A is fresh-started to
// B carrying over the files its source log recorded up to log offset 2,
// and B to C at a modification time. Each new root processes exactly the
// files after its boundary; the old roots are unchanged but for the
// markers, archived, and record the migration like the new ones.
func TestFreshStartFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	t1, t2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	writeInputs(t, in, 0, 8, t0)
	ckA, ckB, ckC := filepath.Join(dir, "A"), filepath.Join(dir, "B"), filepath.Join(dir, "C")
	if ps := runFiles(t, ckA, in, filepath.Join(dir, "outA")); len(ps) != 4 {
		t.Fatalf("root A ran %d batches, want 4", len(ps))
	}
	if got := rowsOf(t, filepath.Join(dir, "outA")); !slices.Equal(got, span(0, 8)) {
		t.Fatalf("root A output %v", got)
	}
	writeInputs(t, in, 8, 10, t1)
	before := tree(t, ckA)

	// Log offsets 0, 1, 2 recorded f-000 … f-005: they are carried over.
	two := int64(2)
	fs, err := lifecycle.FilesBoundary(ctx, openStore(t, ckA), lifecycle.FilesFrom{LogOffset: &two}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Processed) != 6 || fs.Path == "" || *fs.FromLogOffset != 2 {
		t.Fatalf("boundary %+v", fs)
	}
	res, err := lifecycle.FreshStart(ctx, openStore(t, ckA), openStore(t, filepath.Join(dir, "archA")), openStore(t, ckB),
		lifecycle.FreshStartOptions{Source: ckA, Dest: filepath.Join(dir, "archA"), NewRoot: ckB, Start: source.StartPoint{Files: fs},
			Principal: lifecycle.Principal{ID: "alice", Kind: "housekeeping"}, Reason: "bad deploy after f-005", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Steps, "\n"), "other than the 6 the old file source log recorded up to log offset 2") {
		t.Fatalf("steps: %q", res.Steps)
	}
	after := tree(t, ckA)
	for _, k := range []string{lifecycle.ArchivedKey, lifecycle.MigratedToKey} {
		if _, ok := after[k]; !ok {
			t.Fatalf("old root lacks %s", k)
		}
		delete(after, k)
	}
	if !maps.EqualFunc(before, after, bytes.Equal) {
		t.Fatal("the old root changed beyond the markers")
	}
	if _, err := lifecycle.CheckNotArchived(ctx, openStore(t, ckA)); !errors.Is(err, lifecycle.ErrArchived) {
		t.Fatalf("archived root: %v, want ErrArchived", err)
	}
	arch := tree(t, filepath.Join(dir, "archA"))
	for k, v := range before {
		if !bytes.Equal(arch[k], v) {
			t.Fatalf("the archive lacks %s or holds other bytes", k)
		}
	}
	recA, recB := readMigration(t, ckA, lifecycle.MigratedToKey), readMigration(t, ckB, lifecycle.MigratedFromKey)
	ja, _ := json.Marshal(recA)
	jb, _ := json.Marshal(recB)
	if !bytes.Equal(ja, jb) || recA.Boundary.Files == nil || len(recA.Boundary.Files.Processed) != 6 || recA.NewRoot != ckB {
		t.Fatalf("migration records:\n%s\n%s", ja, jb)
	}
	// B processes f-006 … f-009 and nothing of what A's log carried over.
	runFiles(t, ckB, in, filepath.Join(dir, "outB"))
	if got := rowsOf(t, filepath.Join(dir, "outB")); !slices.Equal(got, span(6, 10)) {
		t.Fatalf("root B output %v, want 6 … 9", got)
	}
	// A restart of B reads nothing again, new input is read once.
	writeInputs(t, in, 10, 12, t2)
	runFiles(t, ckB, in, filepath.Join(dir, "outB"))
	if got := rowsOf(t, filepath.Join(dir, "outB")); !slices.Equal(got, span(6, 12)) {
		t.Fatalf("root B output after a restart %v, want 6 … 11", got)
	}

	// B to C at a time: only the files modified at or after t2.
	fs, err = lifecycle.FilesBoundary(ctx, openStore(t, ckB), lifecycle.FilesFrom{}, &t2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lifecycle.FreshStart(ctx, openStore(t, ckB), openStore(t, filepath.Join(dir, "archB")), openStore(t, ckC),
		lifecycle.FreshStartOptions{Source: ckB, Dest: filepath.Join(dir, "archB"), NewRoot: ckC, FromTimestamp: &t2,
			Start: source.StartPoint{Files: fs}, Reason: "replay the last hour", Now: now}); err != nil {
		t.Fatal(err)
	}
	runFiles(t, ckC, in, filepath.Join(dir, "outC"))
	if got := rowsOf(t, filepath.Join(dir, "outC")); !slices.Equal(got, span(10, 12)) {
		t.Fatalf("root C output %v, want 10, 11", got)
	}
	if rec := readMigration(t, ckC, lifecycle.MigratedFromKey); rec.FromTimestamp == nil || !rec.FromTimestamp.Equal(t2) ||
		rec.Boundary.Files.ModifiedFrom == nil || !rec.Boundary.Files.ModifiedFrom.Equal(t2) {
		t.Fatalf("root C migration %+v", rec)
	}

	// A batch boundary names the log offset the batch ended at: batch 1 of
	// A ended at log offset 1 (f-000 … f-003).
	one := int64(1)
	fs, err = lifecycle.FilesBoundary(ctx, openStore(t, ckA), lifecycle.FilesFrom{Batch: &one}, nil)
	if err != nil || len(fs.Processed) != 4 || *fs.FromLogOffset != 1 {
		t.Fatalf("batch boundary %+v, %v", fs, err)
	}
	// Beyond the log, or a batch that does not exist, is refused.
	nine := int64(9)
	for _, from := range []lifecycle.FilesFrom{{LogOffset: &nine}, {Batch: &nine}} {
		if _, err := lifecycle.FilesBoundary(ctx, openStore(t, ckA), from, nil); !errors.Is(err, lifecycle.ErrBadBoundary) {
			t.Fatalf("boundary beyond the checkpoint: %v", err)
		}
	}
	// Names relative to the input are made full paths.
	fs, err = lifecycle.FilesBoundary(ctx, openStore(t, ckA), lifecycle.FilesFrom{Files: []string{"f-000.jsonl"}}, nil)
	if err != nil || len(fs.Processed) != 1 || fs.Processed[0] != fs.Path+"/f-000.jsonl" {
		t.Fatalf("relative names %+v, %v", fs, err)
	}
}

// TestFreshStartFilesBoundaryOfKafka: a files boundary on a Kafka query's
// checkpoint is refused.
func TestFreshStartFilesBoundaryOfKafka(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "ck"))
	put(t, st, "_ckgate/plan.json", `{"version":1,"source":{"kind":"kafka","topic":"clicks"}}`)
	if _, err := lifecycle.FilesBoundary(ctx, st, lifecycle.FilesFrom{Files: []string{"a"}}, nil); !errors.Is(err, lifecycle.ErrBadBoundary) {
		t.Fatalf("files boundary of a Kafka query: %v", err)
	}
	both := source.StartPoint{Kafka: map[string]map[int32]int64{"t": {0: 1}}, Files: &source.FilesStart{Processed: []string{"a"}}}
	if _, err := lifecycle.FreshStart(ctx, st, st, st, lifecycle.FreshStartOptions{Start: both, Reason: "r"}); !errors.Is(err, lifecycle.ErrBadBoundary) {
		t.Fatalf("two boundaries: %v", err)
	}
}

func TestParseFilesBoundary(t *testing.T) {
	for raw, want := range map[string]string{
		`{"logOffset":3}`:           "logOffset 3",
		`{"batch":0}`:               "batch 0",
		`{"files":["a","b/c"]}`:     "files [a b/c]",
		`{"logOffset":-1}`:          "error",
		`{"logOffset":1.5}`:         "error",
		`{"logOffset":1,"batch":2}`: "error",
		`{"files":[]}`:              "error",
		`{"files":[""]}`:            "error",
		`{"clicks":{"0":5}}`:        "error",
		`{"batch":1} {}`:            "error",
		`[]`:                        "error",
		`null`:                      "error",
		``:                          "error",
	} {
		f, err := lifecycle.ParseFilesBoundary(raw)
		got := "error"
		switch {
		case err != nil:
			if !errors.Is(err, lifecycle.ErrBadBoundary) {
				t.Errorf("%s: %v is not ErrBadBoundary", raw, err)
			}
		case f.LogOffset != nil:
			got = fmt.Sprint("logOffset ", *f.LogOffset)
		case f.Batch != nil:
			got = fmt.Sprint("batch ", *f.Batch)
		default:
			got = fmt.Sprint("files ", f.Files)
		}
		if got != want {
			t.Errorf("%s: %s, want %s", raw, got, want)
		}
	}
}

// FuzzParseFilesBoundary: any text is one boundary or ErrBadBoundary,
// never a panic.
func FuzzParseFilesBoundary(f *testing.F) {
	for _, s := range []string{`{"logOffset":3}`, `{"batch":12}`, `{"files":["a.json","/x/b.json"]}`, `{"clicks":{"0":5}}`,
		`{"logOffset":99999999999999999999}`, `{"files":["\u0000"]}`, `{`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		b, err := lifecycle.ParseFilesBoundary(raw)
		if err != nil {
			if !errors.Is(err, lifecycle.ErrBadBoundary) {
				t.Fatalf("%v is not ErrBadBoundary", err)
			}
			return
		}
		n := 0
		if b.LogOffset != nil {
			n++
			if *b.LogOffset < 0 {
				t.Fatal("negative log offset")
			}
		}
		if b.Batch != nil {
			n++
			if *b.Batch < 0 {
				t.Fatal("negative batch")
			}
		}
		if len(b.Files) > 0 {
			n++
		}
		if n != 1 {
			t.Fatalf("%d boundaries in %+v", n, b)
		}
	})
}

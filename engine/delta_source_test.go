package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/engine/source"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// writerSpec copies mem://in (jsonl clicks) into the Delta table, one
// version per batch of two files.
const writerSpec = `name: to-delta
source: {kind: files, path: mem://in, max_files_per_batch: 2}
sink: {kind: delta, path: mem://table}
`

// readerSpec reads the Delta table into a jsonl file sink.
const readerSpec = `name: from-delta
source: {kind: delta, path: mem://table, max_files_per_batch: 1}
sink: {kind: files, path: mem://out}
`

// deltaQueries are the two queries of a Delta source test: a writer of
// mem://table and a reader of it, each with its own checkpoint.
type deltaQueries struct {
	w              *world
	writer, reader *memstore.Store
	pid            int
}

func (d *deltaQueries) run(t *testing.T, text string, cp *memstore.Store) ([]engine.Progress, error) {
	t.Helper()
	d.pid++
	o := d.w.Options(nil, d.pid)
	o.Checkpoint = cp
	return runAll(context.Background(), mustSpec(t, text), o)
}

func (d *deltaQueries) write(t *testing.T, files [][]event) {
	t.Helper()
	writeEvents(t, d.w, "in", files)
	if _, err := d.run(t, writerSpec, d.writer); err != nil {
		t.Fatal(err)
	}
}

// sinkIDs are the "id" fields of the rows in mem://out, sorted; a row
// read twice fails the test.
func sinkIDs(t *testing.T, w *world) []int {
	t.Helper()
	var ids []int
	for _, r := range sinkRows(t, w.Store("out"), "mem://out/") {
		var m struct{ ID int }
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	sort.Ints(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("row id %d read twice", ids[i])
		}
	}
	return ids
}

// eventIDs are the ids of the events the writer keeps (a row per event;
// duplicates in the input are rows too, so they are kept once per copy).
func eventIDs(files [][]event) []int {
	var ids []int
	for _, f := range files {
		for _, e := range f {
			ids = append(ids, e.ID)
		}
	}
	sort.Ints(ids)
	return slices.Compact(ids)
}

// uniqueEvents drops the duplicate events genEvents makes (sinkIDs fails
// on a row read twice).
func uniqueEvents(files [][]event) [][]event {
	seen := map[int]bool{}
	out := make([][]event, len(files))
	for i, f := range files {
		for _, e := range f {
			if !seen[e.ID] {
				seen[e.ID] = true
				out[i] = append(out[i], e)
			}
		}
	}
	return out
}

func newDeltaQueries(t *testing.T) *deltaQueries {
	return &deltaQueries{w: newWorld(), writer: memstore.New(), reader: memstore.New()}
}

// lastSourceOffset is the reader's latest offset of source 0.
func lastSourceOffset(t *testing.T, cp gateway.Store) delta.Position {
	t.Helper()
	ctx := context.Background()
	var latest string
	for a, err := range cp.List(ctx, checkpoint.OffsetsDir+"/") {
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Key) > len(latest) || len(a.Key) == len(latest) && a.Key > latest {
			latest = a.Key
		}
	}
	data, _, err := cp.Get(ctx, latest)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	p, err := source.DeltaPosition(lines[len(lines)-1])
	if err != nil {
		t.Fatalf("%s: %v", latest, err)
	}
	return p
}

// TestDeltaSourceReadsTheTable: the delta source reads every row of a
// table written by the delta sink (its latest snapshot, then the versions
// appended after the first run), one file a batch, exactly once, and
// records Spark's offsets ({"sourceVersion":1,"reservoirId":<table id>,…}).
func TestDeltaSourceReadsTheTable(t *testing.T) {
	files := uniqueEvents(genEvents(11, 8, 10))
	d := newDeltaQueries(t)
	d.write(t, files[:4])
	ps, err := d.run(t, readerSpec, d.reader)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 2 {
		t.Fatalf("%d batches: max_files_per_batch 1 over 2 versions should make 2", len(ps))
	}
	if got, want := sinkIDs(t, d.w), eventIDs(files[:4]); !slices.Equal(got, want) {
		t.Fatalf("after the snapshot: %d rows, want %d", len(got), len(want))
	}
	p := lastSourceOffset(t, d.reader)
	tb, err := delta.Open(context.Background(), d.w.Store("table"), "")
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := tb.Snapshot(context.Background(), -1)
	if p.TableID != snap.Metadata.ID || p.Version != snap.Version+1 || p.Index != delta.BaseIndex || p.IsStartingVersion {
		t.Fatalf("offset %+v, want (%s, %d, -1, false)", p, snap.Metadata.ID, snap.Version+1)
	}
	d.write(t, files)
	if _, err := d.run(t, readerSpec, d.reader); err != nil {
		t.Fatal(err)
	}
	if got, want := sinkIDs(t, d.w), eventIDs(files); !slices.Equal(got, want) {
		t.Fatalf("after the appends: %d rows, want %d", len(got), len(want))
	}
}

// TestDeltaSourceTableReplaced: a table replaced at the same path (a new
// table id, as CREATE OR REPLACE writes) is refused at restart, naming
// both ids and Spark's error; nothing of the new table is read.
func TestDeltaSourceTableReplaced(t *testing.T) {
	files := uniqueEvents(genEvents(12, 6, 10))
	d := newDeltaQueries(t)
	d.write(t, files[:2])
	if _, err := d.run(t, readerSpec, d.reader); err != nil {
		t.Fatal(err)
	}
	before := sinkIDs(t, d.w)
	old := lastSourceOffset(t, d.reader).TableID
	// replace: a new table (new id) at the same path, by a new writer query
	ctx := context.Background()
	for a, err := range d.w.Store("table").List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		d.w.Store("table").Delete(ctx, a.Key, gateway.None())
	}
	d.writer = memstore.New()
	d.write(t, files)
	_, err := d.run(t, readerSpec, d.reader)
	if !errors.Is(err, source.ErrDifferentTable) {
		t.Fatalf("restart on a replaced table: %v", err)
	}
	tb, _ := delta.Open(ctx, d.w.Store("table"), "")
	snap, _ := tb.Snapshot(ctx, -1)
	for _, want := range []string{old, snap.Metadata.ID, "DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("the refusal does not name %s: %v", want, err)
		}
	}
	if got := sinkIDs(t, d.w); !slices.Equal(got, before) {
		t.Fatalf("rows of the new table were read: %d rows, had %d", len(got), len(before))
	}
}

// TestDeltaSourceFilesVacuumed: data files or log versions the reader has
// not read yet are gone (VACUUM, log cleanup): the restart reports the
// gap, naming what is gone and the earliest readable version, and reads
// nothing past it.
func TestDeltaSourceFilesVacuumed(t *testing.T) {
	for _, what := range []string{"data file", "commit"} {
		t.Run(what, func(t *testing.T) {
			files := uniqueEvents(genEvents(13, 8, 10))
			d := newDeltaQueries(t)
			d.write(t, files[:2])
			if _, err := d.run(t, readerSpec, d.reader); err != nil {
				t.Fatal(err)
			}
			before := sinkIDs(t, d.w)
			resume := lastSourceOffset(t, d.reader).Version
			d.write(t, files)
			ctx := context.Background()
			acts, err := delta.ReadCommit(ctx, d.w.Store("table"), resume)
			if err != nil {
				t.Fatal(err)
			}
			gone := delta.CommitKey(resume)
			if what == "data file" {
				for _, a := range acts {
					if a.Add != nil {
						gone = a.Add.Path
					}
				}
			}
			if err := d.w.Store("table").Delete(ctx, gone, gateway.None()); err != nil {
				t.Fatal(err)
			}
			_, err = d.run(t, readerSpec, d.reader)
			if !errors.Is(err, source.ErrInputGone) {
				t.Fatalf("restart with %s gone: %v", gone, err)
			}
			if !strings.Contains(err.Error(), strings.TrimPrefix(gone, delta.LogDir)) && !strings.Contains(err.Error(), fmt.Sprintf("versions %d to", resume)) {
				t.Fatalf("the gap does not name %s: %v", gone, err)
			}
			if !strings.Contains(err.Error(), "earliest version") {
				t.Fatalf("the gap does not say the earliest readable version: %v", err)
			}
			if got := sinkIDs(t, d.w); !slices.Equal(got, before) {
				t.Fatalf("the reader went on past the gap: %d rows, had %d", len(got), len(before))
			}
		})
	}
}

package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/sink"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/internal/duckdbtest"
)

// manifestFiles are the data files the file sink's manifest in dir names,
// as local paths quoted for DuckDB, in manifest order.
func manifestFiles(t *testing.T, dir string) []string {
	t.Helper()
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, _, err := checkpoint.ReadFileSinkLog(context.Background(), st, checkpoint.SinkMetadataDir)
	if err != nil && !errors.Is(err, gateway.ErrNotFound) {
		t.Fatal(err)
	}
	var q []string
	for _, e := range entries {
		q = append(q, duckdbtest.Quote(strings.TrimPrefix(e.Path, "file://")))
	}
	return q
}

// readParquetOf is DuckDB's read_parquet over the files the manifest in
// dir names.
func readParquetOf(t *testing.T, dir string) string {
	t.Helper()
	q := manifestFiles(t, dir)
	if len(q) == 0 {
		t.Fatalf("%s: the manifest names no data file", dir)
	}
	return "read_parquet([" + strings.Join(q, ",") + "])"
}

func columnTypes(r duckdbtest.Result) map[string]string {
	m := map[string]string{}
	for i, c := range r.Columns {
		m[c] = r.Types[i]
	}
	return m
}

// TestParquetSinkTimestampsDuckDB: DuckDB, an independent reader, sees a
// window aggregation's window_start and window_end, and a pass-through
// query's event time, as timestamps, holding the instants the reference
// computes (before typed Parquet it read them as VARCHAR).
func TestParquetSinkTimestampsDuckDB(t *testing.T) {
	files := genEvents(7, 8, 30)
	want := sessionRows(files)
	w := inputWorld(t, files)
	outDir := filepath.Join(t.TempDir(), "out")
	out := "file://" + filepath.ToSlash(outDir)
	specText := strings.Replace(sessionSpec, "sink: {kind: files, path: mem://out}", "sink: {kind: files, path: "+out+", format: parquet}", 1)
	if _, err := runAll(context.Background(), mustSpec(t, specText), w.Options(nil, 1)); err != nil {
		t.Fatal(err)
	}
	src := readParquetOf(t, outDir)
	types := columnTypes(duckdbtest.Query(t, "SELECT * FROM "+src+" LIMIT 0"))
	for _, c := range []string{"window_start", "window_end"} {
		if types[c] != "TIMESTAMP WITH TIME ZONE" {
			t.Errorf("DuckDB reads %s as %q, want TIMESTAMP WITH TIME ZONE (all: %v)", c, types[c], types)
		}
	}
	r := duckdbtest.Query(t, "SELECT user_id, epoch_ms(window_start), epoch_ms(window_end), count, sum_amount FROM "+src)
	var got []string
	for _, v := range r.Rows {
		var start, end int64
		fmt.Sscan(fmt.Sprint(v[1]), &start)
		fmt.Sscan(fmt.Sprint(v[2]), &end)
		got = append(got, fmt.Sprintf(`{"user_id":%q,"window_start":%q,"window_end":%q,"count":%v,"sum_amount":%v}`,
			v[0], fmtTime(start), fmtTime(end), v[3], v[4]))
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Fatalf("DuckDB reads %d rows, the reference has %d\n%s\nwant\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// a stateless query: the event-time field is a timestamp, the others
	// keep their types
	w2 := newWorld()
	writeEvents(t, w2, "in", files)
	out2Dir := filepath.Join(t.TempDir(), "out")
	out2 := "file://" + filepath.ToSlash(out2Dir)
	pass := "name: pass\nsource: {kind: files, path: mem://in}\nevent_time: ts\nwatermark: 10m\nsink: {kind: files, path: " + out2 + ", format: parquet}\n"
	if _, err := runAll(context.Background(), mustSpec(t, pass), w2.Options(nil, 1)); err != nil {
		t.Fatal(err)
	}
	src2 := readParquetOf(t, out2Dir)
	types = columnTypes(duckdbtest.Query(t, "SELECT * FROM "+src2+" LIMIT 0"))
	if types["ts"] != "TIMESTAMP WITH TIME ZONE" || types["amount"] != "BIGINT" || types["user_id"] != "VARCHAR" {
		t.Fatalf("DuckDB reads the columns as %v, want ts TIMESTAMP WITH TIME ZONE, amount BIGINT, user_id VARCHAR", types)
	}
	r = duckdbtest.Query(t, "SELECT id, epoch_ms(ts) FROM "+src2+" ORDER BY id")
	byID := map[int64]int64{}
	for _, f := range files {
		for _, e := range f {
			if !e.Bad {
				byID[int64(e.ID)] = e.TS
			}
		}
	}
	if len(r.Rows) == 0 {
		t.Fatal("DuckDB reads no row")
	}
	for _, v := range r.Rows {
		var id, ms int64
		fmt.Sscan(fmt.Sprint(v[0]), &id)
		fmt.Sscan(fmt.Sprint(v[1]), &ms)
		if byID[id] != ms {
			t.Fatalf("row id %d: ts %d ms, the input has %d", id, ms, byID[id])
		}
	}
}

// TestParquetSinkKeepsRecordedFormat: a sink whose plan records format 1
// (or, as a plan of an older ckgate, no format version) keeps getting
// times as strings, so that its files never mix two types in a column; a
// new sink gets format 2.
func TestParquetSinkKeepsRecordedFormat(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(opts map[string]string)
		format string
	}{
		{"format 1 recorded", func(o map[string]string) { o[sink.FormatVersionKey] = sink.FormatStringTimes }, sink.FormatStringTimes},
		{"none recorded", func(o map[string]string) { delete(o, sink.FormatVersionKey) }, sink.FormatStringTimes},
		{"format 2 recorded", func(map[string]string) {}, sink.FormatTypedTimes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := genEvents(5, 12, 30)
			w := newWorld()
			writeEvents(t, w, "in", files[:3])
			outDir := filepath.Join(t.TempDir(), "out")
			out := "file://" + filepath.ToSlash(outDir)
			specText := strings.Replace(tumblingSpec, "sink: {kind: files, path: mem://out}", "sink: {kind: files, path: "+out+", format: parquet}", 1)
			s := mustSpec(t, specText)
			if _, err := runAll(context.Background(), s, w.Options(nil, 1)); err != nil {
				t.Fatal(err)
			}
			// the plan as the older ckgate (or format 1) left it
			ctx := context.Background()
			data, v, err := w.CP.Get(ctx, checkpoint.PlanKey)
			if err != nil {
				t.Fatal(err)
			}
			var p checkpoint.EnginePlan
			if err := json.Unmarshal(data, &p); err != nil {
				t.Fatal(err)
			}
			if got := p.Settings.SinkOptions[sink.FormatVersionKey]; got != sink.FormatTypedTimes {
				t.Fatalf("a new parquet sink's plan records format %q, want %s", got, sink.FormatTypedTimes)
			}
			tc.edit(p.Settings.SinkOptions)
			b, _ := json.Marshal(p)
			if _, err := w.CP.Put(ctx, checkpoint.PlanKey, b, gateway.IfMatch(v)); err != nil {
				t.Fatal(err)
			}
			before := len(manifestFiles(t, outDir))
			writeEvents(t, w, "in", files)
			if _, err := runAll(ctx, s, w.Options(nil, 2)); err != nil {
				t.Fatal(err)
			}
			all := manifestFiles(t, outDir)
			if len(all) <= before {
				t.Fatalf("the restart wrote no new data file (%d before, %d after)", before, len(all))
			}
			want := "TIMESTAMP WITH TIME ZONE"
			if tc.format == sink.FormatStringTimes {
				want = "VARCHAR"
			}
			for _, f := range all[before:] {
				types := columnTypes(duckdbtest.Query(t, "SELECT * FROM read_parquet("+f+") LIMIT 0"))
				if types["window_start"] != want {
					t.Fatalf("%s: window_start is %s, want %s (the recorded format %s)", f, types["window_start"], want, tc.format)
				}
			}
			data, _, _ = w.CP.Get(ctx, checkpoint.PlanKey)
			if err := json.Unmarshal(data, &p); err != nil {
				t.Fatal(err)
			}
			if got := p.Settings.SinkOptions[sink.FormatVersionKey]; got != tc.format {
				t.Fatalf("after the restart the plan records format %q, want %s", got, tc.format)
			}
		})
	}
}

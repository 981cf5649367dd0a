package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/engine/delta/deltatest"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/internal/duckdbtest"
)

func deltaSpec(base, table string) string {
	return strings.Replace(base, "sink: {kind: files, path: mem://out}", "sink: {kind: delta, path: "+table+"}", 1)
}

// sessionRow formats a row of the session query as the reference does.
func sessionRow(user string, startMs, endMs, count, sum int64) string {
	return fmt.Sprintf(`{"user_id":%q,"window_start":%q,"window_end":%q,"count":%d,"sum_amount":%d}`,
		user, fmtTime(startMs), fmtTime(endMs), count, sum)
}

// jsonReplayFiles are the data files the commits 0..latest of the table
// name (adds minus removes), read from the JSON log alone.
func jsonReplayFiles(t *testing.T, s gateway.Store, upTo int64) []string {
	t.Helper()
	live := map[string]bool{}
	for v := int64(0); v <= upTo; v++ {
		acts, err := delta.ReadCommit(context.Background(), s, v)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range acts {
			if a.Add != nil {
				live[a.Add.Path] = true
			}
			if a.Remove != nil {
				delete(live, a.Remove.Path)
			}
		}
	}
	out := make([]string, 0, len(live))
	for p := range live {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// deltaTableRows reads the session rows of the table's latest snapshot
// with the engine's own reader (engine/delta) and parquet-go, sorted; it
// fails on a row that appears twice.
func deltaTableRows(t *testing.T, s gateway.Store) []string {
	t.Helper()
	rows := deltatest.Rows(t, s, func(m map[string]parquet.Value) string {
		return sessionRow(string(m["user_id"].ByteArray()), m["window_start"].Int64()/1000,
			m["window_end"].Int64()/1000, m["count"].Int64(), m["sum_amount"].Int64())
	})
	sort.Strings(rows)
	for i := 1; i < len(rows); i++ {
		if rows[i] == rows[i-1] {
			t.Fatalf("row %s is in the table twice", rows[i])
		}
	}
	return rows
}

// TestDeltaSinkIsADeltaTable: a session query writing a Delta table on the
// local disk. The engine's own reader (snapshot from the newest
// checkpoint) and DuckDB (read_parquet over exactly the data files the
// JSON log names) agree with the reference on the rows; the txn of the
// query is its last batch; the checkpoint parquet ckgate wrote, read back
// by DuckDB, names the files, txn, protocol and metaData of the JSON
// replay, in the columns of the checkpoints Delta itself writes.
func TestDeltaSinkIsADeltaTable(t *testing.T) {
	files := genEvents(7, 30, 20)
	want := sessionRows(files)
	w := inputWorld(t, files)
	dir := filepath.Join(t.TempDir(), "table")
	s := mustSpec(t, deltaSpec(sessionSpec, "file://"+filepath.ToSlash(dir)))
	ps, err := runAll(context.Background(), s, w.Options(nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := deltaTableRows(t, st); !slices.Equal(got, want) {
		t.Fatalf("the engine's reader: %d rows, reference %d\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	tb, err := delta.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	latest := tb.Log().Latest()
	if latest < delta.CheckpointInterval {
		t.Fatalf("only %d versions: no checkpoint to check", latest+1)
	}
	snap, err := tb.Snapshot(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Base == nil {
		t.Fatal("the snapshot was not built from ckgate's checkpoint")
	}
	lastBatch := ps[len(ps)-1].BatchID
	q, err := openQuery(ctx, s, w.Options(nil, 2))
	if err != nil {
		t.Fatal(err)
	}
	qid := q.ID()
	q.Close(ctx)
	if v, ok := snap.TxnVersion(qid); !ok || v != lastBatch {
		t.Fatalf("txn of query %s: %d (%v), want the last batch %d", qid, v, ok, lastBatch)
	}
	replay := jsonReplayFiles(t, st, latest)
	var quoted []string
	for _, p := range replay {
		quoted = append(quoted, duckdbtest.Quote(filepath.Join(dir, p)))
	}
	r := duckdbtest.Query(t, "SELECT user_id, epoch_ms(window_start), epoch_ms(window_end), count, sum_amount FROM read_parquet(["+strings.Join(quoted, ",")+"])")
	var got []string
	for _, v := range r.Rows {
		var a [4]int64
		for i := range a {
			fmt.Sscan(fmt.Sprint(v[i+1]), &a[i])
		}
		got = append(got, sessionRow(fmt.Sprint(v[0]), a[0], a[1], a[2], a[3]))
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Fatalf("DuckDB over the JSON log's files: %d rows, reference %d", len(got), len(want))
	}

	// the checkpoint, read by DuckDB, against the JSON replay up to it
	cpv := snap.Base.Version
	cp := duckdbtest.Quote(filepath.Join(dir, delta.CheckpointKey(cpv)))
	r = duckdbtest.Query(t, "SELECT add.path FROM read_parquet("+cp+") WHERE add IS NOT NULL ORDER BY 1")
	var cpFiles []string
	for _, v := range r.Rows {
		cpFiles = append(cpFiles, fmt.Sprint(v[0]))
	}
	if want := jsonReplayFiles(t, st, cpv); !slices.Equal(cpFiles, want) {
		t.Fatalf("checkpoint %d names %d files, the JSON replay to %d has %d", cpv, len(cpFiles), cpv, len(want))
	}
	at, err := tb.Snapshot(ctx, cpv)
	if err != nil {
		t.Fatal(err)
	}
	r = duckdbtest.Query(t, "SELECT txn.appId, txn.version FROM read_parquet("+cp+") WHERE txn IS NOT NULL")
	if len(r.Rows) != 1 || fmt.Sprint(r.Rows[0][0]) != qid || fmt.Sprint(r.Rows[0][1]) != fmt.Sprint(at.Txns[qid].Version) {
		t.Fatalf("checkpoint txn %v, the JSON replay's %+v", r.Rows, at.Txns)
	}
	r = duckdbtest.Query(t, "SELECT metaData.id, metaData.schemaString FROM read_parquet("+cp+") WHERE metaData IS NOT NULL")
	if len(r.Rows) != 1 || fmt.Sprint(r.Rows[0][0]) != snap.Metadata.ID || fmt.Sprint(r.Rows[0][1]) != snap.Metadata.SchemaString {
		t.Fatalf("checkpoint metaData %v", r.Rows)
	}
	if !strings.Contains(snap.Metadata.SchemaString, `{"name":"window_start","type":"timestamp"`) {
		t.Fatalf("schema %s: window_start is not a timestamp", snap.Metadata.SchemaString)
	}
	r = duckdbtest.Query(t, "SELECT protocol.minReaderVersion, protocol.minWriterVersion FROM read_parquet("+cp+") WHERE protocol IS NOT NULL")
	if len(r.Rows) != 1 || fmt.Sprint(r.Rows[0]) != "[1 2]" {
		t.Fatalf("checkpoint protocol %v", r.Rows)
	}
	compareCheckpointColumns(t, cp, duckdbtest.Quote("../testdata/delta/checkpoint/_delta_log/00000000000000000010.checkpoint.parquet"))
}

// newerFields are add/remove fields of PROTOCOL.md that the Delta which
// wrote testdata/delta's checkpoints predates.
var newerFields = map[string]bool{"add.clusteringProvider": true}

// compareCheckpointColumns: every action column of ckgate's checkpoint,
// and every field of it, is in Delta's own checkpoint with the same type
// (DuckDB's DESCRIBE), but for newerFields.
func compareCheckpointColumns(t *testing.T, ours, theirs string) {
	t.Helper()
	describe := func(f string) map[string]map[string]string {
		r := duckdbtest.Query(t, "DESCRIBE SELECT * FROM read_parquet("+f+")")
		out := map[string]map[string]string{}
		for _, v := range r.Rows {
			out[fmt.Sprint(v[0])] = structFields(fmt.Sprint(v[1]))
		}
		return out
	}
	a, b := describe(ours), describe(theirs)
	for _, col := range []string{"add", "remove", "metaData", "protocol", "txn"} {
		if a[col] == nil {
			t.Errorf("ckgate's checkpoint has no %s column", col)
		}
	}
	for col, fields := range a {
		ref, ok := b[col]
		if !ok {
			t.Errorf("column %s is not in Delta's checkpoint", col)
			continue
		}
		for f, typ := range fields {
			if ref[f] != typ && !newerFields[col+"."+f] {
				t.Errorf("%s.%s: ckgate writes %s, Delta %s", col, f, typ, ref[f])
			}
		}
	}
}

// structFields splits DuckDB's "STRUCT(a T, b STRUCT(...), ...)" into its
// top-level fields.
func structFields(typ string) map[string]string {
	body, ok := strings.CutPrefix(typ, "STRUCT(")
	if !ok {
		return map[string]string{"": typ}
	}
	body = strings.TrimSuffix(body, ")")
	out := map[string]string{}
	depth, start := 0, 0
	add := func(s string) {
		s = strings.TrimSpace(s)
		name, t, _ := strings.Cut(s, " ")
		out[strings.Trim(name, `"`)] = t
	}
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				add(body[start:i])
				start = i + 1
			}
		}
	}
	add(body[start:])
	return out
}

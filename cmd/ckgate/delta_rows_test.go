package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/gateway"
)

// deltaSinkSpec turns the demo spec's file sink into a Delta sink writing
// the table at table (a path or store URL).
func deltaSinkSpec(src, table string) string {
	return strings.Replace(src, "sink: {kind: files, path: demo/out/sessions, format: jsonl}",
		fmt.Sprintf("sink: {kind: delta, path: '%s'}", table), 1)
}

// deltaSinkRows reads the session rows of the Delta table in st (its
// latest snapshot, by the engine's own reader) as the jsonl sink writes
// them, so that they compare with the reference sessions; a table that
// does not exist yet has none.
func deltaSinkRows(t *testing.T, st gateway.Store) []string {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Open(ctx, st, "")
	if errors.Is(err, delta.ErrNotDelta) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tb.Snapshot(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	ts := func(v parquet.Value) string {
		return time.UnixMicro(v.Int64()).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	var rows []string
	for _, f := range snap.Files {
		key, ok, err := delta.FileKey("", f.Path)
		if err != nil || !ok {
			t.Fatalf("add %s: %v", f.Path, err)
		}
		data, _, err := st.Get(ctx, key)
		if err != nil {
			t.Fatalf("data file %s of the table's log: %v", key, err)
		}
		r := parquet.NewReader(bytes.NewReader(data))
		var cols []string
		for _, c := range r.Schema().Columns() {
			cols = append(cols, c[0])
		}
		buf := make([]parquet.Row, 64)
		for {
			n, err := r.ReadRows(buf)
			for _, pr := range buf[:n] {
				m := map[string]parquet.Value{}
				for _, v := range pr {
					m[cols[v.Column()]] = v
				}
				b, merr := json.Marshal(map[string]any{"user_id": string(m["user_id"].ByteArray()), "window_start": ts(m["window_start"]),
					"window_end": ts(m["window_end"]), "count": m["count"].Int64(), "sum_amount": m["sum_amount"].Int64()})
				if merr != nil {
					t.Fatal(merr)
				}
				rows = append(rows, string(b))
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("data file %s: %v", key, err)
			}
		}
		r.Close()
	}
	return rows
}

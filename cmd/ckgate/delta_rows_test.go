package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ckgate/ckgate/engine/delta/deltatest"
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
	ts := func(v parquet.Value) string {
		return time.UnixMicro(v.Int64()).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	return deltatest.Rows(t, st, func(m map[string]parquet.Value) string {
		b, err := json.Marshal(map[string]any{"user_id": string(m["user_id"].ByteArray()), "window_start": ts(m["window_start"]),
			"window_end": ts(m["window_end"]), "count": m["count"].Int64(), "sum_amount": m["sum_amount"].Int64()})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	})
}

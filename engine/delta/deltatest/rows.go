// Package deltatest reads what a Delta table holds, for tests that check
// a sink's output against a reference.
package deltatest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/gateway"
)

// Rows reads every row of the latest snapshot of the Delta table at the
// root of s, with the engine's own reader (engine/delta) and parquet-go:
// each row is given to format as a map from column name to value, and the
// strings it returns come back in file order. A store that holds no table
// yet has no rows.
func Rows(t testing.TB, s gateway.Store, format func(map[string]parquet.Value) string) []string {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Open(ctx, s, "")
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
	var rows []string
	for _, f := range snap.Files {
		key, ok, err := delta.FileKey("", f.Path)
		if err != nil || !ok {
			t.Fatalf("add %s: %v", f.Path, err)
		}
		data, _, err := s.Get(ctx, key)
		if err != nil {
			t.Fatalf("data file %s of the table's log: %v", key, err)
		}
		rows = append(rows, ParquetRows(t, key, data, format)...)
	}
	return rows
}

// ParquetRows reads every row of the Parquet file data (named key in
// failures), giving each to format as a map from column name to value; the
// strings it returns come back in file order.
func ParquetRows(t testing.TB, key string, data []byte, format func(map[string]parquet.Value) string) []string {
	t.Helper()
	r := parquet.NewReader(bytes.NewReader(data))
	defer r.Close()
	var cols []string
	for _, c := range r.Schema().Columns() {
		cols = append(cols, c[0])
	}
	var rows []string
	buf := make([]parquet.Row, 64)
	for {
		n, err := r.ReadRows(buf)
		for _, pr := range buf[:n] {
			m := map[string]parquet.Value{}
			for _, v := range pr {
				m[cols[v.Column()]] = v
			}
			rows = append(rows, format(m))
		}
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatalf("data file %s: %v", key, err)
		}
	}
}

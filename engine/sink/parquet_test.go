package sink

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ckgate/ckgate/engine/row"
)

// readParquet reads a file back as column name → values (nil for null).
func readParquet(t *testing.T, data []byte) (names []string, rows []map[string]any) {
	t.Helper()
	r := parquet.NewReader(bytes.NewReader(data))
	defer r.Close()
	for _, c := range r.Schema().Columns() {
		names = append(names, c[0])
	}
	buf := make([]parquet.Row, 16)
	for {
		n, err := r.ReadRows(buf)
		for _, pr := range buf[:n] {
			m := map[string]any{}
			for _, v := range pr {
				name := names[v.Column()]
				if v.IsNull() {
					m[name] = nil
					continue
				}
				switch v.Kind() {
				case parquet.Int64:
					m[name] = v.Int64()
				case parquet.Double:
					m[name] = v.Double()
				case parquet.Boolean:
					m[name] = v.Boolean()
				default:
					m[name] = string(v.ByteArray())
				}
			}
			rows = append(rows, m)
		}
		if errors.Is(err, io.EOF) {
			return names, rows
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestParquetRoundTrip(t *testing.T) {
	names := []string{"user", "n", "x", "ok", "obj"}
	rows := []row.Row{
		{Names: names, Vals: []row.Value{row.StrV("u1"), row.IntV(3), row.IntV(2), row.BoolV(true), {K: row.JSON, S: `{"a":1}`}}},
		{Names: names[:3], Vals: []row.Value{row.StrV("u2"), row.IntV(-4), row.FloatV(2.5)}},
		{Names: []string{"n", "extra"}, Vals: []row.Value{{}, row.StrV("e")}},
	}
	data, err := encodeParquet(rows, inferColumns(rows, nil))
	if err != nil {
		t.Fatal(err)
	}
	cols, got := readParquet(t, data)
	if len(cols) != 6 || len(got) != 3 {
		t.Fatalf("columns %v, %d rows", cols, len(got))
	}
	want := []map[string]any{
		{"user": "u1", "n": int64(3), "x": 2.0, "ok": true, "obj": `{"a":1}`, "extra": nil},
		{"user": "u2", "n": int64(-4), "x": 2.5, "ok": nil, "obj": nil, "extra": nil},
		{"user": nil, "n": nil, "x": nil, "ok": nil, "obj": nil, "extra": "e"},
	}
	for i := range want {
		for k, v := range want[i] {
			if got[i][k] != v {
				t.Fatalf("row %d column %s = %v (%T), want %v", i, k, got[i][k], got[i][k], v)
			}
		}
	}
}

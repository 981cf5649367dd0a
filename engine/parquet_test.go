package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

// TestParquetSink: the parquet file sink holds, row for row, what the
// reference says (read back with parquet-go through the manifest).
func TestParquetSink(t *testing.T) {
	files := genEvents(7, 8, 30)
	ref := queries[0].ref
	ref.where = notHealth
	want, _ := ref.run(files)
	w := newWorld()
	writeEvents(t, w, "in", files)
	specText := strings.Replace(sessionSpec, "sink: {kind: files, path: mem://out}", "sink: {kind: files, path: mem://out, format: parquet}", 1)
	if _, err := runAll(context.Background(), mustSpec(t, specText), w.options(nil, 1)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	entries, _, err := checkpoint.ReadFileSinkLog(ctx, w.store("out"), checkpoint.SinkMetadataDir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Path, ".parquet") {
			t.Fatalf("data file %s", e.Path)
		}
		data, _, err := w.store("out").Get(ctx, strings.TrimPrefix(e.Path, "mem://out/"))
		if err != nil {
			t.Fatal(err)
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
				m := map[string]any{}
				for _, v := range pr {
					switch c := cols[v.Column()]; {
					case c == "window_start" || c == "window_end":
						// TIMESTAMP(MICROS, UTC)
						m[c] = fmtTime(v.Int64() / 1000)
					case v.Kind() == parquet.Int64:
						m[cols[v.Column()]] = v.Int64()
					default:
						m[cols[v.Column()]] = string(v.ByteArray())
					}
				}
				got = append(got, fmt.Sprintf(`{"user_id":%q,"window_start":%q,"window_end":%q,"count":%d,"sum_amount":%d}`,
					m["user_id"], m["window_start"], m["window_end"], m["count"], m["sum_amount"]))
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		r.Close()
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Fatalf("parquet sink holds %d rows, reference %d\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

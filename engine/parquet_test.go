package engine_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/delta/deltatest"
)

// TestParquetSink: the parquet file sink holds, row for row, what the
// reference says (read back with parquet-go through the manifest).
func TestParquetSink(t *testing.T) {
	files := genEvents(7, 8, 30)
	want := sessionRows(files)
	w := inputWorld(t, files)
	specText := strings.Replace(sessionSpec, "sink: {kind: files, path: mem://out}", "sink: {kind: files, path: mem://out, format: parquet}", 1)
	if _, err := runAll(context.Background(), mustSpec(t, specText), w.Options(nil, 1)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	entries, _, err := checkpoint.ReadFileSinkLog(ctx, w.Store("out"), checkpoint.SinkMetadataDir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Path, ".parquet") {
			t.Fatalf("data file %s", e.Path)
		}
		data, _, err := w.Store("out").Get(ctx, strings.TrimPrefix(e.Path, "mem://out/"))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, deltatest.ParquetRows(t, e.Path, data, func(m map[string]parquet.Value) string {
			// window bounds are TIMESTAMP(MICROS, UTC)
			return fmt.Sprintf(`{"user_id":%q,"window_start":%q,"window_end":%q,"count":%d,"sum_amount":%d}`,
				string(m["user_id"].ByteArray()), fmtTime(m["window_start"].Int64()/1000), fmtTime(m["window_end"].Int64()/1000),
				m["count"].Int64(), m["sum_amount"].Int64())
		})...)
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Fatalf("parquet sink holds %d rows, reference %d\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

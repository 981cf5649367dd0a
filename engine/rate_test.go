package engine_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"
)

// TestRateSourceAcrossRestarts: the rate source's rows are fixed by its
// start time (recorded by the first run), so a query stopped after two
// batches and resumed produces what one run does.
func TestRateSourceAcrossRestarts(t *testing.T) {
	const rows, rps, keys, size = 5000, 100, 7, 10_000
	specText := fmt.Sprintf(`
name: rate
source: {kind: rate, rows_per_second: %d, keys: %d, start: "2026-01-01T00:00:00Z", total_rows: %d, max_rows_per_batch: 700}
event_time: timestamp
watermark: 2s
where: 'value != 13'
operator: {kind: tumbling_window, keys: [key], size: 10s, aggregates: [count, {sum: value}, {min: value}, {max: value}, {avg: value}]}
sink: {kind: files, path: mem://out}
partitions: 3
`, rps, keys, rows)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	// reference: no late rows (time only moves forward); windows end at or
	// before the final watermark (last row's time minus 2 s)
	type agg struct{ n, sum, lo, hi int64 }
	ws := map[[2]int64]*agg{}
	var maxTS int64
	for i := int64(0); i < rows; i++ {
		ts := start + i*1000/rps
		maxTS = max(maxTS, ts)
		if i == 13 {
			continue
		}
		k := [2]int64{i % keys, ts - ts%size}
		a := ws[k]
		if a == nil {
			a = &agg{lo: i, hi: i}
			ws[k] = a
		}
		a.n, a.sum, a.lo, a.hi = a.n+1, a.sum+i, min(a.lo, i), max(a.hi, i)
	}
	wm := maxTS - 2000
	var want []string
	for k, a := range ws {
		if k[1]+size <= wm {
			want = append(want, fmt.Sprintf(`{"key":%d,"window_start":%q,"window_end":%q,"count":%d,"sum_value":%d,"min_value":%d,"max_value":%d,"avg_value":%s}`,
				k[0], fmtTime(k[1]), fmtTime(k[1]+size), a.n, a.sum, a.lo, a.hi, fmtFloat(float64(a.sum)/float64(a.n))))
		}
	}
	sort.Strings(want)

	w := newWorld()
	ctx := context.Background()
	q, err := openQuery(ctx, mustSpec(t, specText), w.Options(nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, ran, err := q.RunBatch(ctx); err != nil || !ran {
			t.Fatal(ran, err)
		}
	}
	q.Close(ctx)
	ps, err := runAll(ctx, mustSpec(t, specText), w.Options(nil, 2))
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].BatchID != 2 {
		t.Fatalf("resumed at batch %d, want 2", ps[0].BatchID)
	}
	got := sinkRows(t, w.Store("out"), "mem://out/")
	if !slices.Equal(got, want) {
		t.Fatalf("sink holds %d windows, reference %d\n%v\n%v", len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
	}
}

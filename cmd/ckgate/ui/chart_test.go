package ui

import (
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

func TestDownsampleKeepsSpikes(t *testing.T) {
	var ps []Point
	for i := range 10_000 {
		ps = append(ps, Point{int64(i), 1})
	}
	ps[4321].Y, ps[777].Y = 1e6, -5
	got := Downsample(ps, MaxChartPoints)
	if len(got) > MaxChartPoints {
		t.Fatalf("%d points", len(got))
	}
	var hi, lo bool
	for i, p := range got {
		hi = hi || p.X == 4321 && p.Y == 1e6
		lo = lo || p.X == 777 && p.Y == -5
		if i > 0 && got[i-1].X >= p.X {
			t.Fatalf("points out of order at %d", i)
		}
	}
	if !hi || !lo {
		t.Fatalf("the spike (%v) or the dip (%v) was lost", hi, lo)
	}
	if short := Downsample(ps[:50], MaxChartPoints); len(short) != 50 {
		t.Fatalf("a short series was cut to %d", len(short))
	}
}

func i64(v int64) *int64 { return &v }

// TestChartsMarkWhatWentWrong: a watermark of 0 is no gap (Spark's UI
// rule), an offset that went backwards or stalled is marked, as are the
// in-flight batch and a missing commit.
func TestChartsMarkWhatWentWrong(t *testing.T) {
	off := func(n int64) []checkpoint.BatchOffset {
		return []checkpoint.BatchOffset{{Source: "0", SourceOffset: checkpoint.SourceOffset{Kind: checkpoint.OffsetFile, LogOffset: i64(n)}}}
	}
	r := &checkpoint.Report{LatestOffsetsBatch: i64(4), LatestCommitBatch: i64(3), CommitLog: checkpoint.LogSummary{Count: 3},
		Batches: []checkpoint.Batch{
			{ID: 0, WatermarkMs: i64(0), TimestampMs: i64(1000), Committed: true, Offsets: off(5)},
			{ID: 1, WatermarkMs: i64(400), TimestampMs: i64(2000), Committed: true, Offsets: off(3)},
			{ID: 2, WatermarkMs: i64(900), TimestampMs: i64(3000), Committed: false, Offsets: off(3)},
			{ID: 3, WatermarkMs: i64(1500), TimestampMs: i64(4000), Committed: true, Offsets: off(3)},
			{ID: 4, WatermarkMs: i64(2000), TimestampMs: i64(5000), Committed: false, Offsets: off(9)},
		}}
	cs := map[string]*Chart{}
	for _, c := range charts(r) {
		cs[c.ID] = c
	}
	gap := cs["gap"].Series[0].Points
	if len(gap) != 4 || gap[0] != (Point{1, 1600}) || gap[3] != (Point{4, 3000}) {
		t.Fatalf("gap points %v", gap)
	}
	kinds := map[string][]int64{}
	for _, m := range append(cs["gap"].Markers, cs["offsets"].Markers...) {
		kinds[m.Kind] = append(kinds[m.Kind], m.X)
	}
	if len(kinds["inflight"]) != 1 || kinds["inflight"][0] != 4 || len(kinds["missing"]) != 1 || kinds["missing"][0] != 2 ||
		len(kinds["backwards"]) != 1 || kinds["backwards"][0] != 1 || len(kinds["stalled"]) != 1 || kinds["stalled"][0] != 3 {
		t.Fatalf("markers %v", kinds)
	}
	svg := string(cs["gap"].SVG())
	if !strings.Contains(svg, `role="img"`) || !strings.Contains(svg, "<title") || !strings.Contains(svg, "<desc") || !strings.Contains(svg, `class="marker inflight"`) {
		t.Fatalf("svg %s", svg)
	}
	if cs["duration"].Exact || !strings.Contains(cs["duration"].FullDesc(), "Estimated") {
		t.Fatalf("the duration chart must say it is an estimate: %s", cs["duration"].FullDesc())
	}
}

// TestProgressCharts: what the engine recorded in commits/N becomes four
// exact charts per batch (rows, rate, late rows, state rows), each series
// named and holding the batches that have progress; a batch without
// progress (Spark's) and one without a duration add no rate point.
func TestProgressCharts(t *testing.T) {
	bs := []checkpoint.Batch{
		{ID: 0, Progress: &checkpoint.BatchProgress{InputRows: 10, OutputRows: 4, LateRowsDropped: 1, LateRowsAccepted: 2, StateRows: 7,
			DurationMs: map[string]int64{"addBatch": 1500, "walCommit": 500}}},
		{ID: 1},
		{ID: 2, Progress: &checkpoint.BatchProgress{InputRows: 6, OutputRows: 6, StateRows: 9}},
	}
	type series struct {
		name string
		ps   []Point
	}
	want := []struct {
		id, unit string
		series   []series
	}{
		{"rows", "rows", []series{{"input rows", []Point{{0, 10}, {2, 6}}}, {"output rows", []Point{{0, 4}, {2, 6}}}}},
		{"rate", "rows/s", []series{{"rows/s", []Point{{0, 5}}}}},
		{"late", "rows", []series{{"dropped by the watermark", []Point{{0, 1}, {2, 0}}}, {"late but accepted", []Point{{0, 2}, {2, 0}}}}},
		{"staterows", "rows", []series{{"state rows", []Point{{0, 7}, {2, 9}}}}},
	}
	got := progressCharts(bs)
	if len(got) != len(want) {
		t.Fatalf("%d charts, want %d", len(got), len(want))
	}
	for i, w := range want {
		c := got[i]
		if c.ID != w.id || c.Unit != w.unit || !c.Exact || c.XLabel != "batch" || c.Title == "" || c.Desc == "" || len(c.Series) != len(w.series) {
			t.Fatalf("chart %d: %+v, want %s in %s with %d series", i, c, w.id, w.unit, len(w.series))
		}
		for j, s := range w.series {
			if c.Series[j].Name != s.name || !slices.Equal(c.Series[j].Points, s.ps) || c.Series[j].Total != len(s.ps) {
				t.Errorf("chart %s series %d: %q %v (total %d), want %q %v", c.ID, j, c.Series[j].Name, c.Series[j].Points, c.Series[j].Total, s.name, s.ps)
			}
		}
	}
	if progressCharts(bs[1:2]) != nil {
		t.Error("charts drawn for a checkpoint without recorded progress")
	}
}

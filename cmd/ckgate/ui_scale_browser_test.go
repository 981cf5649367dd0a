//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ckgate/ckgate/cmd/ckgate/ui"
	"github.com/ckgate/ckgate/engine/checkpoint"
)

// writeSparkLayout writes a checkpoint in Spark's layout under dir: n
// batches of a file source, a batch a minute, the watermark behind it from
// batch 1 on, the latest batch in flight.
func writeSparkLayout(t *testing.T, dir, qid string, n int) {
	t.Helper()
	put := func(key string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("metadata", []byte(`{"id":"`+qid+`"}`))
	for b := range n {
		ts := int64(1_750_000_000_000) + int64(b)*60_000
		wm := int64(0)
		if b > 0 {
			wm = ts - 600_000 - int64(b%13)*1000
		}
		data, err := checkpoint.OffsetSeq{Version: 1, Metadata: &checkpoint.OffsetSeqMetadata{BatchWatermarkMs: wm, BatchTimestampMs: ts},
			Sources: []checkpoint.OffsetEntry{{JSON: `{"logOffset":` + strconv.Itoa(b) + `}`, Present: true}}}.Encode()
		if err != nil {
			t.Fatal(err)
		}
		put(checkpoint.OffsetsKey(int64(b)), data)
		if b < n-1 {
			c, _ := checkpoint.CommitMetadata{Version: 1, NextBatchWatermarkMs: wm}.Encode()
			put(checkpoint.CommitKey(int64(b)), c)
		}
	}
}

// TestUIInBrowserAtScale: a 10,000-batch checkpoint and a fleet of 1,000
// stay usable in the browser: charts downsampled to the count they say,
// with inspect's values; the batch table and the fleet paged.
func TestUIInBrowserAtScale(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	writeSparkLayout(t, big, "22222222-0000-4000-8000-000000000000", 10_000)
	fleet := filepath.Join(dir, "fleet")
	for i := range 1000 {
		writeSparkLayout(t, filepath.Join(fleet, fmt.Sprintf("q%04d", i)), fmt.Sprintf("33333333-0000-4000-8000-%012d", i), 2+i%4)
	}
	base := startUI(t, big, fleet)
	origin := strings.TrimSuffix(base, "/")

	// the fleet: 1,001 checkpoints, 100 a page, the next page one click away
	b.open(t, base+"?sort=path")
	rows := b.fleetRows(t, "", "path")
	if len(rows) != ui.FleetPageRows {
		t.Fatalf("%d rows on the first page, want %d", len(rows), ui.FleetPageRows)
	}
	checkFleet(t, rows[:5], 5)
	if _, err := chromedp.RunResponse(b.ctx, chromedp.Click(chromedp.CSS(`nav.pager a`))); err != nil {
		t.Fatal(err)
	}
	next := b.fleetRows(t, "", "path")
	if len(next) != ui.FleetPageRows || next[0].URL == rows[0].URL {
		t.Fatalf("page 2: %d rows from %s", len(next), next[0].URL)
	}
	b.allTitled(t, "fleet of 1,001")
	b.screenshot(t, "ui-fleet-1000")
	b.clean(t, origin+"/", "data:")

	// the 10,000-batch checkpoint
	b.open(t, base+"c?url=file://"+big)
	var u string
	b.eval(t, `document.querySelector("h1.cp-url").textContent`, &u)
	rep := uiInspectJSON(t, u)
	if len(rep.Batches) != 10_000 {
		t.Fatalf("inspect: %d batches", len(rep.Batches))
	}
	var series []chartSeries
	b.eval(t, `Array.from(document.querySelectorAll("svg.chart")).flatMap(s => Array.from(s.querySelectorAll("polyline.series")).map(p => ({
		Chart: s.dataset.chart, Series: p.dataset.series, Points: p.points.numberOfItems})))`, &series)
	want := map[int64]int64{}
	for _, bt := range rep.Batches {
		if *bt.WatermarkMs > 0 {
			want[bt.ID] = *bt.TimestampMs - *bt.WatermarkMs
		}
	}
	for _, s := range series {
		if s.Points > ui.MaxChartPoints || s.Points < ui.MaxChartPoints/2 {
			t.Errorf("chart %s %q: %d points, want the downsampled count (at most %d)", s.Chart, s.Series, s.Points, ui.MaxChartPoints)
		}
	}
	var gap [][]string
	b.eval(t, `Array.from(document.querySelectorAll('table.data[data-chart="gap"] tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))`, &gap)
	var desc string
	b.eval(t, `document.querySelector('svg[data-chart="gap"] desc').textContent`, &desc)
	if !strings.Contains(desc, fmt.Sprintf("downsampled from %d to %d points", len(want), len(gap))) {
		t.Errorf("the gap chart's description %q does not give its downsampling (%d of %d)", desc, len(gap), len(want))
	}
	for _, row := range gap {
		id, _ := strconv.ParseInt(row[1], 10, 64)
		if v, ok := want[id]; !ok || strconv.FormatInt(v, 10) != row[2] {
			t.Errorf("gap point batch %d = %s, inspect says %d", id, row[2], v)
		}
	}
	var batchRows int
	b.eval(t, `document.querySelectorAll("table.batches tbody tr").length`, &batchRows)
	if batchRows != ui.BatchPageRows {
		t.Errorf("%d batch rows on page 1, want %d", batchRows, ui.BatchPageRows)
	}
	b.allTitled(t, "10,000 batches")
	b.screenshot(t, "ui-checkpoint-10000")
	if _, err := chromedp.RunResponse(b.ctx, chromedp.Click(chromedp.CSS(`nav.pager a`))); err != nil {
		t.Fatal(err)
	}
	var first string
	b.eval(t, `document.querySelector("table.batches tbody tr td").textContent`, &first)
	if first != strconv.Itoa(10_000-1-ui.BatchPageRows) {
		t.Errorf("page 2 of the batch table starts at batch %s", first)
	}
	b.clean(t, origin+"/", "data:")
}

package ui

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLargeCheckpointStaysUsable: a 10,000-batch checkpoint's page is
// downsampled for the charts (and says so), pages its batch table, stays
// under 500 KB, and its report under 3 MB.
func TestLargeCheckpointStaysUsable(t *testing.T) {
	const n = 10_000
	dir := t.TempDir()
	writeDir(t, filepath.Join(dir, "big"), synthFiles(t, "11111111-0000-4000-8000-000000000000", n, true))
	l := &Loader{Roots: []Root{fileRoot(t, dir)}}
	c, err := l.LoadCheckpoint(context.Background(), l.Roots[0], "big")
	if err != nil {
		t.Fatal(err)
	}
	if c.Report == nil || len(c.Report.Batches) != n {
		t.Fatalf("%s: %v", c.Err, c.Report)
	}
	var first bytes.Buffer
	if err := RenderCheckpoint(&first, c, nil, l.now(), url.Values{}); err != nil {
		t.Fatal(err)
	}
	page := first.String()
	if first.Len() > 500<<10 {
		t.Errorf("page 1: %d bytes, want < 500 KB", first.Len())
	}
	for _, m := range regexp.MustCompile(`data-points="(\d+)"`).FindAllStringSubmatch(page, -1) {
		var pts int
		fmt.Sscan(m[1], &pts)
		if pts > MaxChartPoints {
			t.Errorf("a series of %d points drawn, at most %d", pts, MaxChartPoints)
		}
	}
	if !strings.Contains(page, "downsampled from 9999 to") { // the gap: every batch but 0 has a watermark
		t.Errorf("the gap chart does not say it is downsampled")
	}
	if got := strings.Count(page, "<tr class=\"") + strings.Count(page, "<tr class=\"\""); strings.Count(page, "</td></tr>\n") == 0 || got == 0 {
		t.Errorf("no batch rows")
	}
	rows := regexp.MustCompile(`<tr class="[a-z]*"><td>(\d+)</td>`).FindAllStringSubmatch(page, -1)
	if len(rows) != BatchPageRows || rows[0][1] != "9999" {
		t.Fatalf("page 1 holds %d batch rows from %v, want %d from the latest", len(rows), rows[:min(1, len(rows))], BatchPageRows)
	}
	if !strings.Contains(page, "Page 1 of 50") {
		t.Errorf("page 1 does not say it is one of 50")
	}
	var last bytes.Buffer
	if err := RenderCheckpoint(&last, c, nil, l.now(), url.Values{"page": {"50"}}); err != nil {
		t.Fatal(err)
	}
	rows = regexp.MustCompile(`<tr class="[a-z]*"><td>(\d+)</td>`).FindAllStringSubmatch(last.String(), -1)
	if len(rows) != BatchPageRows || rows[len(rows)-1][1] != "0" {
		t.Fatalf("page 50 holds %d rows, the last %v", len(rows), rows[len(rows)-1])
	}
	var rep bytes.Buffer
	f := &Fleet{Checkpoints: []Checkpoint{*c}, Now: l.now()}
	if err := WriteReport(&rep, f, []*Checkpoint{c}); err != nil {
		t.Fatal(err)
	}
	if rep.Len() > 3<<20 {
		t.Errorf("report of %d batches: %d bytes, want < 3 MB", n, rep.Len())
	}
	if got := strings.Count(rep.String(), `<tr class="`); got < n {
		t.Errorf("the report holds %d batch rows, want all %d", got, n)
	}
}

// TestLargeFleetStaysUsable: 1,000 checkpoints are paged 100 a page,
// sorted over all of them, under 500 KB a page.
func TestLargeFleetStaysUsable(t *testing.T) {
	l := &Loader{Roots: []Root{fileRoot(t, localFleet(t, 1000))}}
	f, err := l.LoadFleet(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Checkpoints) != 1000 {
		t.Fatalf("%d checkpoints", len(f.Checkpoints))
	}
	var b bytes.Buffer
	if err := RenderFleet(&b, f, url.Values{"sort": {"offsets"}, "dir": {"desc"}}); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 500<<10 {
		t.Errorf("fleet page: %d bytes, want < 500 KB", b.Len())
	}
	s := b.String()
	if n := strings.Count(s, "<tr data-loc="); n != FleetPageRows || !strings.Contains(s, "Page 1 of 10") {
		t.Fatalf("%d rows on the page", n)
	}
	if first := regexp.MustCompile(`data-s-offsets="(\d+)"`).FindStringSubmatch(s); first == nil || first[1] != "6" {
		t.Fatalf("sorted by offsets, descending: the first row has %v, want 6 (7 batches)", first)
	}
	b.Reset()
	if err := RenderFleet(&b, f, url.Values{"status": {"in_flight"}}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "<tr data-loc="); n != 100 || !strings.Contains(b.String(), "100 shown") {
		t.Fatalf("status in_flight: %d rows", n)
	}
}

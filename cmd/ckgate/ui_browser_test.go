//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

// browser is a headless Chromium driven by chromedp, with every request
// the page made and every JavaScript or console error it logged.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	requests []string
	errors   []string
}

// newBrowser starts Debian's chromium (found on PATH). Without one the
// test is skipped, or fails when CI is set.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no chromium on PATH: CI runs the browser tests (make tools installs it)")
		}
		t.Skip("no chromium on PATH (make tools installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless,
		chromedp.WindowSize(1400, 1000), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 10*time.Minute) // a loaded machine under -race is slow
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	b := &browser{ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, ev.Request.URL)
		case *runtime.EventExceptionThrown:
			b.errors = append(b.errors, "exception: "+ev.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == "error" || ev.Type == "warning" {
				b.errors = append(b.errors, fmt.Sprintf("console.%s", ev.Type))
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == "error" || ev.Entry.Level == "warning" {
				b.errors = append(b.errors, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *browser) run(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// eval runs js in the page and decodes its value into out.
func (b *browser) eval(t *testing.T, js string, out any) {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](js))
	if err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
}

// open navigates to u and waits for the page's load.
func (b *browser) open(t *testing.T, u string) {
	t.Helper()
	b.run(t, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("body")))
}

// poll waits until js is true.
func poll(js string) chromedp.Action[chromedp.Void] { return chromedp.Poll[chromedp.Void](js) }

// pollSorted waits until the fleet table's shown rows are in key's order
// (desc: descending), compared as sortedBy does: the page re-renders the
// rows after it writes the view into the address.
func pollSorted(key string, desc bool) chromedp.Action[chromedp.Void] {
	return poll(fmt.Sprintf(`(() => {
		const v = Array.from(document.querySelectorAll("#fleet #fleet-table tbody tr")).filter(r => !r.hidden && r.offsetParent !== null).map(r => r.getAttribute("data-s-" + %q) || "");
		const cmp = (a, b) => (a !== "" && b !== "" && !isNaN(Number(a)) && !isNaN(Number(b))) ? Number(a) - Number(b) : (a < b ? -1 : a > b ? 1 : 0);
		for (let i = 1; i < v.length; i++) { const c = cmp(v[i-1], v[i]); if (%t ? c < 0 : c > 0) return false; }
		return v.length > 0;
	})()`, key, desc))
}

// clean fails on any request that left the allowed origins and on any
// JavaScript, console or browser log error, then forgets them.
func (b *browser) clean(t *testing.T, allowed ...string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.requests {
		if !slices.ContainsFunc(allowed, func(p string) bool { return strings.HasPrefix(r, p) }) {
			t.Errorf("the page requested %s (allowed: %v)", r, allowed)
		}
	}
	for _, e := range b.errors {
		t.Errorf("the page logged %s", e)
	}
	b.requests, b.errors = nil, nil
}

// screenshot writes the page to $CKGATE_UI_SCREENSHOTS (or the test's
// temporary directory) for review.
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("CKGATE_UI_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// allTitled fails unless every SVG on the page has a <title>.
func (b *browser) allTitled(t *testing.T, view string) {
	t.Helper()
	var n struct{ SVGs, Untitled int }
	b.eval(t, `({SVGs: document.querySelectorAll("svg").length,
		Untitled: Array.from(document.querySelectorAll("svg")).filter(s => !s.querySelector(":scope > title") || !s.querySelector(":scope > title").textContent).length})`, &n)
	if n.SVGs == 0 || n.Untitled != 0 {
		t.Errorf("%s: %d SVGs, %d without a title", view, n.SVGs, n.Untitled)
	}
}

type fleetRow struct {
	URL, Status, QID, Offsets, Commit, Watermark string
	Sort                                         string
}

// fleetRows are the visible rows of the fleet table, in order; sortKey
// also reads each row's value for that column.
func (b *browser) fleetRows(t *testing.T, scope, sortKey string) []fleetRow {
	t.Helper()
	var rows []fleetRow
	b.eval(t, fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).filter(r => !r.hidden && r.offsetParent !== null).map(r => ({
		URL: r.dataset.loc, Status: r.dataset.status, QID: r.querySelector(".qid").textContent,
		Offsets: r.querySelector(".offsets").textContent, Commit: r.querySelector(".commit").textContent,
		Watermark: r.querySelector(".watermark").textContent, Sort: r.getAttribute("data-s-" + %q) || ""}))`,
		scope+" #fleet-table tbody tr", sortKey), &rows)
	return rows
}

// inspectJSON is `ckgate inspect --format json` of u, every batch.
func uiInspectJSON(t *testing.T, u string) checkpoint.Report {
	t.Helper()
	r := ckgate(t, Options{}, "", "inspect", "--format", "json", "--max-batches", "1000000", u)
	if r.code != 0 && r.code != 1 {
		t.Fatalf("inspect %s: exit %d\n%s", u, r.code, r.stderr)
	}
	var rep checkpoint.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("inspect %s: %v", u, err)
	}
	return rep
}

func optString(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

// checkFleet compares every row with inspect's JSON of its checkpoint.
func checkFleet(t *testing.T, rows []fleetRow, want int) {
	t.Helper()
	if len(rows) != want {
		t.Fatalf("%d fleet rows, want %d", len(rows), want)
	}
	for _, row := range rows {
		rep := uiInspectJSON(t, row.URL)
		if row.Status != string(rep.Status) || row.QID != rep.QueryID && !(row.QID == "-" && rep.QueryID == "") ||
			row.Offsets != optString(rep.LatestOffsetsBatch) || row.Commit != optString(rep.LatestCommitBatch) || row.Watermark != optString(rep.WatermarkMs) {
			t.Errorf("fleet row %+v; inspect: status %s query %s offsets %s commit %s watermark %s", row, rep.Status, rep.QueryID,
				optString(rep.LatestOffsetsBatch), optString(rep.LatestCommitBatch), optString(rep.WatermarkMs))
		}
	}
}

// sortedBy fails unless rows are ordered by their Sort values (numbers
// where both are numbers; an empty value first).
func sortedBy(t *testing.T, rows []fleetRow, desc bool) {
	t.Helper()
	less := func(a, b string) int {
		if a == "" || b == "" {
			return strings.Compare(a, b)
		}
		x, e1 := strconv.ParseFloat(a, 64)
		y, e2 := strconv.ParseFloat(b, 64)
		if e1 == nil && e2 == nil {
			return int(x - y)
		}
		return strings.Compare(a, b)
	}
	for i := 1; i < len(rows); i++ {
		c := less(rows[i-1].Sort, rows[i].Sort)
		if desc {
			c = -c
		}
		if c > 0 {
			t.Fatalf("rows %d and %d out of order (desc %v): %q then %q", i-1, i, desc, rows[i-1].Sort, rows[i].Sort)
		}
	}
}

type chartSeries struct {
	Chart, Series string
	Points        int
}

// checkCharts compares the points of the charts of a checkpoint page
// (prefix: the id prefix of its charts) with inspect's JSON: the gap chart
// has one point per batch with a watermark above 0 (Spark's UI rule), the
// rows chart one per batch with recorded progress, each equal to its
// mirror table and to the JSON's values.
func (b *browser) checkCharts(t *testing.T, scope, prefix string, rep checkpoint.Report) {
	t.Helper()
	var series []chartSeries
	b.eval(t, fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).flatMap(s => Array.from(s.querySelectorAll("polyline.series")).map(p => ({
		Chart: s.dataset.chart, Series: p.dataset.series, Points: p.points.numberOfItems})))`, scope+" svg.chart"), &series)
	table := func(chart, name string) [][]string {
		var rows [][]string
		b.eval(t, fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).filter(r => r.dataset.series === %q).map(r => Array.from(r.cells).map(c => c.textContent))`,
			scope+` table.data[data-chart="`+chart+`"] tbody tr`, name), &rows)
		return rows
	}
	for _, s := range series {
		if n := len(table(s.Chart, s.Series)); n != s.Points {
			t.Errorf("chart %s series %q: %d points drawn, %d in its table", s.Chart, s.Series, s.Points, n)
		}
	}
	want := func(chart, name string, vals map[int64]int64) {
		t.Helper()
		got := table(prefix+chart, name)
		if len(vals) == 0 {
			return
		}
		if len(got) != len(vals) {
			t.Errorf("chart %s %q: %d points, %d batches have the value", chart, name, len(got), len(vals))
		}
		for _, row := range got {
			id, _ := strconv.ParseInt(row[1], 10, 64)
			if v, ok := vals[id]; !ok || strconv.FormatInt(v, 10) != row[2] {
				t.Errorf("chart %s %q batch %d: %s, inspect says %d (present %v)", chart, name, id, row[2], v, ok)
			}
		}
	}
	gaps, inRows := map[int64]int64{}, map[int64]int64{}
	for _, bt := range rep.Batches {
		if bt.WatermarkMs != nil && bt.TimestampMs != nil && *bt.WatermarkMs > 0 {
			gaps[bt.ID] = *bt.TimestampMs - *bt.WatermarkMs
		}
		if bt.Progress != nil {
			inRows[bt.ID] = bt.Progress.InputRows
		}
	}
	want("gap", "gap", gaps)
	want("rows", "input rows", inRows)
	if rep.Writer.Kind == checkpoint.WriterCkgate && len(inRows) == 0 {
		t.Errorf("a ckgate checkpoint without recorded progress")
	}
}

// fleetSize is how many checkpoints uiFixture holds: the demo's, five of
// Spark's and the four of Spark 4.0's checkpoint-v2 directory.
const fleetSize = 10

// uiFixture is the demo checkpoint (one run of the demo query) and a
// fleet of Spark's own checkpoints from testdata/spark.
func uiFixture(t *testing.T) (dir string, roots []string) {
	t.Helper()
	dir = hostileDemo(t)
	for _, n := range []string{
		"checkpoint-version-3.2.0-session-window-with-repartition", "checkpoint-version-2.4.0-streaming-join",
		"checkpoint-test-offsetId-commitId-inconsistent", "checkpoint-version-2.1.0", "checkpoint-version-4.0.0-checkpoint-v2",
		"checkpoint-version-2.3.1-for-multi-watermark-policy",
	} {
		if err := os.CopyFS(filepath.Join(dir, "spark", n), os.DirFS(filepath.Join("..", "..", "testdata", "spark", n))); err != nil {
			t.Fatal(err)
		}
	}
	return dir, []string{filepath.Join(dir, "demo", "checkpoint"), filepath.Join(dir, "spark")}
}

// startUI runs `ckgate ui --no-browser` in process and returns the
// address it printed; the server stops at the end of the test.
func startUI(t *testing.T, roots ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := Run(ctx, Options{Stdout: pw, Stderr: io.Discard}, append([]string{"ckgate", "ui", "--no-browser"}, roots...))
		pw.Close()
		done <- code
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("ckgate ui: exit %d", code)
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("ckgate ui printed no address: %v", err)
	}
	go io.Copy(io.Discard, pr) //nolint:errcheck
	f := strings.Fields(line)
	if len(f) < 3 || !strings.HasPrefix(f[2], "http://127.0.0.1:") {
		t.Fatalf("ckgate ui printed %q", line)
	}
	return f[2]
}

// TestUIInBrowser: `ckgate ui` over the demo checkpoint and a fleet of
// Spark's, in headless Chromium: the fleet rows match inspect's JSON,
// sorting reorders them, the charts hold inspect's values, every SVG has
// a title, no request leaves the page's origin, nothing logs an error.
func TestUIInBrowser(t *testing.T) {
	b := newBrowser(t)
	_, roots := uiFixture(t)
	base := startUI(t, roots...)
	origin := strings.TrimSuffix(base, "/")

	b.open(t, base)
	rows := b.fleetRows(t, "", "offsets")
	checkFleet(t, rows, fleetSize)
	b.allTitled(t, "fleet")
	b.screenshot(t, "ui-fleet")
	b.clean(t, origin+"/", "data:")

	// sorting: a click on a heading reorders the rows, a second reverses them
	for _, dir := range []string{"asc", "desc"} {
		if _, err := chromedp.RunResponse(b.ctx, chromedp.Click(chromedp.CSS(`th[data-key="offsets"] a`))); err != nil {
			t.Fatal(err)
		}
		b.run(t, poll(`new URLSearchParams(location.search).get("sort") === "offsets" && new URLSearchParams(location.search).get("dir") === "`+dir+`"`))
		sorted := b.fleetRows(t, "", "offsets")
		sortedBy(t, sorted, dir == "desc")
		if len(sorted) != len(rows) || slices.Equal(sorted, rows) && dir == "asc" {
			t.Fatalf("sort by offsets %s: rows %v", dir, sorted)
		}
	}
	b.clean(t, origin+"/", "data:")

	// each checkpoint page, reached by its link
	var links []string
	b.eval(t, `Array.from(document.querySelectorAll("#fleet-table td.path a")).map(a => a.href)`, &links)
	for i, link := range links {
		b.open(t, link)
		var u string
		b.eval(t, `document.querySelector("h1.cp-url").textContent`, &u)
		rep := uiInspectJSON(t, u)
		b.checkCharts(t, "", "", rep)
		b.allTitled(t, u)
		var status string
		b.eval(t, `document.querySelector("td.status").textContent`, &status)
		if status != string(rep.Status) {
			t.Errorf("%s: status %q, inspect says %s", u, status, rep.Status)
		}
		if rep.Writer.Kind == checkpoint.WriterCkgate || i == 0 {
			b.screenshot(t, fmt.Sprintf("ui-checkpoint-%d-%s", i, rep.Writer.Kind))
		}
	}
	b.clean(t, origin+"/", "data:")
}

// TestReportInBrowser: `ckgate report --html` over the same checkpoints,
// opened from file://: the same rows, sorting by the page's script with
// the view in the address, a page per checkpoint, and no request but the
// file itself.
func TestReportInBrowser(t *testing.T) {
	b := newBrowser(t)
	dir, roots := uiFixture(t)
	file := filepath.Join(dir, "report.html")
	r := ckgate(t, Options{}, "", append([]string{"report", "--html", file}, roots...)...)
	r.want(t, 0, "wrote "+file+": 10 checkpoints")
	b.open(t, "file://"+file)
	rows := b.fleetRows(t, "#fleet", "offsets")
	checkFleet(t, rows, fleetSize)
	b.allTitled(t, "report")
	b.screenshot(t, "report-fleet")

	b.run(t, chromedp.Click(chromedp.CSS(`th[data-key="offsets"] a`)), poll(`location.hash.includes("sort=offsets")`), pollSorted("offsets", false))
	asc := b.fleetRows(t, "#fleet", "offsets")
	sortedBy(t, asc, false)
	b.run(t, chromedp.Click(chromedp.CSS(`th[data-key="offsets"] a`)), poll(`location.hash.includes("dir=desc")`), pollSorted("offsets", true))
	desc := b.fleetRows(t, "#fleet", "offsets")
	sortedBy(t, desc, true)
	if slices.Equal(asc, desc) {
		t.Fatalf("sorting did not reorder the rows: %v", asc)
	}
	// the filter keeps the rows that match, and the view is in the address
	b.run(t, chromedp.SetValue(chromedp.CSS(`#q`), "inconsistent"), chromedp.Click(chromedp.CSS(`form.filter button`)),
		poll(`location.hash.includes("q=inconsistent")`),
		// the script filters after it writes the view into the address: wait for the rows too
		poll(`Array.from(document.querySelectorAll("#fleet #fleet-table tbody tr")).filter(r => !r.hidden && r.offsetParent !== null).length <= 1`))
	if got := b.fleetRows(t, "#fleet", "path"); len(got) != 1 || got[0].Status != "inconsistent" {
		t.Fatalf("filter inconsistent: %v", got)
	}
	var hash string
	b.eval(t, `location.hash`, &hash)
	b.open(t, "file://"+file+hash) // bookmarked: the same view
	if got := b.fleetRows(t, "#fleet", "path"); len(got) != 1 {
		t.Fatalf("bookmarked %s: %d rows", hash, len(got))
	}

	// every checkpoint's section, from its link
	b.open(t, "file://"+file)
	var links []string
	b.eval(t, `Array.from(document.querySelectorAll("#fleet-table td.path a")).map(a => a.getAttribute("href"))`, &links)
	for i, l := range links {
		b.run(t, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#fleet-table td.path a[href=%q]`, l))),
			poll(fmt.Sprintf(`location.hash === %q`, l)))
		var vis struct {
			Fleet bool
			URL   string
		}
		id := strings.TrimPrefix(l, "#")
		b.eval(t, fmt.Sprintf(`({Fleet: document.getElementById("fleet").offsetParent !== null,
			URL: document.getElementById(%q).offsetParent !== null ? document.querySelector("#%s h1.cp-url").textContent : ""})`, id, id), &vis)
		if vis.Fleet || vis.URL == "" {
			t.Fatalf("%s: fleet visible %v, checkpoint %q", l, vis.Fleet, vis.URL)
		}
		rep := uiInspectJSON(t, vis.URL)
		b.checkCharts(t, "#"+id, id+"-", rep)
		if i == 0 || rep.Writer.Kind == checkpoint.WriterCkgate {
			b.screenshot(t, fmt.Sprintf("report-checkpoint-%d-%s", i, rep.Writer.Kind))
		}
		b.run(t, chromedp.NavigateBack())
	}
	b.clean(t, "file://", "data:")
}

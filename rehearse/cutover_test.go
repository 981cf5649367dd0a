package rehearse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/rehearse"
	ct "github.com/ckgate/ckgate/rehearse/cutovertest"
)

// cutoverWorld is a generated stream, the current spec and its production
// checkpoint and sink.
type cutoverWorld struct {
	dir, input, cp, sink string
	cur                  ct.Spec
	batches              [][]ct.Event
}

func newCutoverWorld(t *testing.T, batches [][]ct.Event, watermark, gap string, production bool) *cutoverWorld {
	t.Helper()
	dir := t.TempDir()
	w := &cutoverWorld{dir: dir, input: filepath.Join(dir, "in"), cp: filepath.Join(dir, "checkpoints", "clicks"),
		sink: filepath.Join(dir, "out"), batches: batches}
	if err := ct.Write(w.input, batches); err != nil {
		t.Fatal(err)
	}
	w.cur = ct.Spec{Name: "clicks", Input: w.input, Sink: w.sink, Watermark: watermark, Gap: gap}
	if production {
		p := filepath.Join(dir, "current.yaml")
		if err := w.cur.WriteSpec(p); err != nil {
			t.Fatal(err)
		}
		if err := ct.RunProduction(context.Background(), p, w.cp); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *cutoverWorld) load(t *testing.T, s ct.Spec) *spec.Spec {
	t.Helper()
	p := filepath.Join(w.dir, fmt.Sprintf("spec-%s-%s-%s.yaml", s.Watermark, s.Gap, strings.Join(s.Keys, "-")))
	if err := s.WriteSpec(p); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func (w *cutoverWorld) rehearse(t *testing.T, cand ct.Spec, opts rehearse.CutoverOptions) *rehearse.CutoverReport {
	t.Helper()
	opts.Registry, opts.BaseDir, opts.Checkpoint = registry(), w.dir, w.cp
	opts.Workdir = filepath.Join(w.dir, fmt.Sprintf("work-%d", len(w.batches)))
	opts.Keep = true
	before := w.snapshot(t)
	rep, err := rehearse.Cutover(context.Background(), w.load(t, w.cur), w.load(t, cand), opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(rep, "", " ")
	t.Logf("%s", b)
	if after := w.snapshot(t); after != before {
		t.Fatalf("the production checkpoint, sink or input changed:\n%s\n%s", before, after)
	}
	return rep
}

// snapshot hashes the production checkpoint, sink and input.
func (w *cutoverWorld) snapshot(t *testing.T) string {
	var out []string
	for _, d := range []string{w.cp, w.sink, w.input} {
		if _, err := os.Stat(d); err != nil {
			out = append(out, err.Error())
			continue
		}
		out = append(out, treeHash(t, d))
	}
	return strings.Join(out, "\n")
}

// watermarkStream: sessions of u01..u20, then a batch with late rows of
// their own users: inside both delays (late-in), between the current 10m
// and the candidate 20m delay (late-mid, and late-at exactly at the
// current watermark), beyond both (late-out); then events far ahead that
// close every earlier session.
func watermarkStream() [][]ct.Event {
	b2 := ct.Users("u", 20, ct.T0+61*ct.Min)
	b2 = append(b2, ct.Users("late-in-", 5, ct.T0+55*ct.Min)...)
	b2 = append(b2, ct.Users("late-mid-", 5, ct.T0+45*ct.Min)...)
	// the watermark of batch 2 under the current 10m delay
	b2 = append(b2, ct.Event{User: "late-at-01", Ts: ct.T0 + 60*ct.Min + 19_000 - 10*ct.Min, Page: "p0", Amount: 1})
	b2 = append(b2, ct.Users("late-out-", 5, ct.T0+30*ct.Min)...)
	return [][]ct.Event{
		ct.Users("u", 20, ct.T0),
		ct.Users("u", 20, ct.T0+60*ct.Min),
		b2,
		ct.Users("u", 20, ct.T0+300*ct.Min),
	}
}

// oracleDropped computes, independently of the engine, which users' rows
// each delay drops: batch k's watermark is max(watermark of k-1, the
// largest event of k-1 minus the delay in force when k-1 committed), the
// current delay before the boundary (those commits are the production
// checkpoint's), the run's own from it on; a row at or below its batch's
// watermark is dropped.
func oracleDropped(batches [][]ct.Event, from int, curDelay, delay int64) map[string]bool {
	dropped := map[string]bool{}
	wm := int64(0)
	for k, b := range batches {
		if k > 0 {
			d := delay
			if k-1 < from {
				d = curDelay
			}
			mx := int64(-1 << 63)
			for _, e := range batches[k-1] {
				mx = max(mx, e.Ts)
			}
			wm = max(wm, mx-d)
		}
		for _, e := range b {
			if k >= from && e.Ts <= wm {
				dropped[e.User] = true
			}
		}
	}
	return dropped
}

func TestCutoverWatermarkChangeNamesTheRowsTheOraclePredicts(t *testing.T) {
	stream := watermarkStream()
	w := newCutoverWorld(t, stream, "10m", "5m", true)
	cand := w.cur
	cand.Watermark = "20m"
	from := int64(1)
	rep := w.rehearse(t, cand, rehearse.CutoverOptions{FromBatch: &from})

	cur, nw := oracleDropped(stream, 1, 10*ct.Min, 10*ct.Min), oracleDropped(stream, 1, 10*ct.Min, 20*ct.Min)
	var want []string // users dropped by the current query and kept by the candidate
	for u := range cur {
		if !nw[u] {
			want = append(want, u)
		}
	}
	sort.Strings(want)
	if len(want) != 6 {
		t.Fatalf("the oracle predicts %v: the stream does not test what it should", want)
	}
	var late []string
	for _, r := range rep.LateRows {
		var e ct.Event
		if err := json.Unmarshal([]byte(r.Row), &e); err != nil {
			t.Fatal(err)
		}
		if r.Current != "dropped" || r.Candidate == "dropped" {
			t.Errorf("late row %s: current %s, candidate %s", r.Row, r.Current, r.Candidate)
		}
		late = append(late, e.User)
	}
	sort.Strings(late)
	if !slices.Equal(late, want) {
		t.Errorf("late rows handled differently: %v, the oracle predicts %v", late, want)
	}
	var only []string
	for _, d := range rep.Reconcile.Rows {
		if d.Side != "only_candidate" {
			t.Errorf("unexpected %s row %s", d.Side, d.Key)
			continue
		}
		var m map[string]any
		_ = json.Unmarshal([]byte(d.Candidate), &m)
		only = append(only, m["user_id"].(string))
	}
	sort.Strings(only)
	if !slices.Equal(only, want) || rep.Reconcile.OnlyCandidate != int64(len(want)) || rep.Reconcile.Changed != 0 || rep.Reconcile.OnlyCurrent != 0 {
		t.Errorf("rows only in the candidate %v (%s), want the sessions of %v", only, rep.Reconcile, want)
	}
	if rep.Verdict != rehearse.VerdictDiffers || rep.NeedsNewCheckpoint || !rep.Cand.Restored {
		t.Errorf("verdict %s, needs a new checkpoint %v, restored %v", rep.Verdict, rep.NeedsNewCheckpoint, rep.Cand.Restored)
	}
	if rep.Current.LateDropped-rep.Cand.LateDropped != int64(len(want)) {
		t.Errorf("late dropped: current %d, candidate %d", rep.Current.LateDropped, rep.Cand.LateDropped)
	}
	if rep.Boundary.StateRows == 0 || rep.Current.StateRowsBefore != rep.Boundary.StateRows {
		t.Errorf("restored state at batch 1: %+v, current %+v", rep.Boundary, rep.Current)
	}
	var wmChange bool
	for _, c := range rep.Compat {
		wmChange = wmChange || c.Rule == "watermark"
	}
	if !wmChange {
		t.Errorf("compat does not report the watermark change: %+v", rep.Compat)
	}
}

// gapStream: every user clicks every 10 minutes, three times: three
// sessions under a 5m gap, one under a 30m gap; far-ahead events close
// them.
func gapStream() [][]ct.Event {
	return [][]ct.Event{
		ct.Users("u", 10, ct.T0),
		ct.Users("u", 10, ct.T0+10*ct.Min),
		ct.Users("u", 10, ct.T0+20*ct.Min),
		ct.Users("z", 1, ct.T0+600*ct.Min),
	}
}

func TestCutoverSessionGapChangeKeepsInputCountsAndChangesSessions(t *testing.T) {
	w := newCutoverWorld(t, gapStream(), "1m", "5m", true)
	cand := w.cur
	cand.Gap = "30m"
	rep := w.rehearse(t, cand, rehearse.CutoverOptions{})
	if rep.Current.RowsIn != 31 || rep.Cand.RowsIn != rep.Current.RowsIn {
		t.Errorf("rows in: current %d, candidate %d, want 31 each", rep.Current.RowsIn, rep.Cand.RowsIn)
	}
	// closed sessions: 3 per user under 5m, 1 under 30m (z01's is open)
	if rep.Current.RowsOut != 30 || rep.Cand.RowsOut != 10 {
		t.Errorf("sessions: current %d, candidate %d, want 30 and 10", rep.Current.RowsOut, rep.Cand.RowsOut)
	}
	if rep.Verdict != rehearse.VerdictDiffers || !rep.NeedsNewCheckpoint {
		t.Errorf("verdict %s, needs a new checkpoint %v: a gap change cannot restore the state", rep.Verdict, rep.NeedsNewCheckpoint)
	}
}

func TestCutoverIdenticalCandidateIsSame(t *testing.T) {
	w := newCutoverWorld(t, watermarkStream(), "10m", "5m", true)
	from, k := int64(1), int64(2)
	rep := w.rehearse(t, w.cur, rehearse.CutoverOptions{FromBatch: &from, RestartAt: &k})
	if rep.Verdict != rehearse.VerdictSame || rep.NeedsNewCheckpoint || len(rep.Reasons) != 0 {
		t.Fatalf("verdict %s: %v", rep.Verdict, rep.Reasons)
	}
	if rep.Current.OutputSHA256 != rep.Cand.OutputSHA256 || rep.Current.RowsOut == 0 {
		t.Errorf("outputs are not byte-equal: %s %s (%d rows)", rep.Current.OutputSHA256, rep.Cand.OutputSHA256, rep.Current.RowsOut)
	}
	if rep.Current.Restarts != 1 || rep.Cand.Restarts != 1 {
		t.Errorf("restarts: %d, %d", rep.Current.Restarts, rep.Cand.Restarts)
	}
}

func TestCutoverKeyChangeNeedsNewCheckpoint(t *testing.T) {
	w := newCutoverWorld(t, watermarkStream(), "10m", "5m", true)
	cand := w.cur
	cand.Keys = []string{"page"}
	from := int64(2)
	rep := w.rehearse(t, cand, rehearse.CutoverOptions{FromBatch: &from})
	if rep.Verdict != rehearse.VerdictDiffers || !rep.NeedsNewCheckpoint || rep.Cand.Restored {
		t.Fatalf("verdict %s, needs new %v, restored %v", rep.Verdict, rep.NeedsNewCheckpoint, rep.Cand.Restored)
	}
	if !strings.Contains(strings.Join(rep.Reasons, " "), "needs a new checkpoint") || !strings.Contains(rep.Loses, "before batch 2") {
		t.Errorf("reasons %v, loses %q", rep.Reasons, rep.Loses)
	}
}

func TestCutoverWithoutProductionRunsABaseline(t *testing.T) {
	w := newCutoverWorld(t, gapStream(), "1m", "5m", false)
	iv := rehearse.Interval{Start: ct.T0 + 10*ct.Min, End: ct.T0 + 11*ct.Min}
	rep := w.rehearse(t, w.cur, rehearse.CutoverOptions{Interval: &iv})
	if !rep.Baseline || rep.Boundary.FromBatch != 1 || rep.Boundary.ToBatch != 1 || rep.Verdict != rehearse.VerdictSame {
		t.Fatalf("baseline %v, boundary %+v, verdict %s", rep.Baseline, rep.Boundary, rep.Verdict)
	}
}

// TestCutoverHTTPSink: with an http sink both runs post to their own
// receivers (the http sink's ledger of the re-run batches is cut from the
// copies, so they are sent again), never to the production endpoint.
func TestCutoverHTTPSink(t *testing.T) {
	ctx := context.Background()
	w := newCutoverWorld(t, watermarkStream(), "10m", "5m", false)
	var hits atomic.Int64
	prod := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer prod.Close()
	withHTTP := func(s *spec.Spec) *spec.Spec {
		s.Sink = spec.Sink{Kind: spec.SinkHTTP, URL: prod.URL, Headers: map[string]string{"Authorization": "Bearer prod"}, BatchSize: 20,
			Timeout: spec.Duration(10 * time.Second)}
		return s
	}
	cur := withHTTP(w.load(t, w.cur))
	if err := ct.RunSpec(ctx, cur, w.cp, w.dir); err != nil {
		t.Fatal(err)
	}
	posted := hits.Load()
	if posted == 0 {
		t.Fatal("the production run posted nothing")
	}
	wm := w.cur
	wm.Watermark = "20m"
	from := int64(1)
	for _, tc := range []struct {
		cand    *spec.Spec
		verdict string
	}{{withHTTP(w.load(t, w.cur)), rehearse.VerdictSame}, {withHTTP(w.load(t, wm)), rehearse.VerdictDiffers}} {
		rep, err := rehearse.Cutover(ctx, cur, tc.cand, rehearse.CutoverOptions{FromBatch: &from,
			Options: rehearse.Options{Registry: registry(), BaseDir: w.dir, Checkpoint: w.cp}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != tc.verdict || rep.Current.RowsOut == 0 || !rep.Cand.Restored {
			t.Errorf("watermark %s: verdict %s (want %s), rows out %d: %v", tc.cand.Watermark, rep.Verdict, tc.verdict, rep.Current.RowsOut, rep.Reasons)
		}
	}
	if n := hits.Load(); n != posted {
		t.Fatalf("the production endpoint got %d requests during the rehearsals", n-posted)
	}
}

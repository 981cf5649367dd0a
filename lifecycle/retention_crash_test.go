package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/enginetest"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/lifecycle"
	"github.com/ckgate/ckgate/policy"
)

const retentionSpec = `
name: windows
source: {kind: files, path: mem://in, max_files_per_batch: 1}
event_time: ts
watermark: 10m
operator: {kind: tumbling_window, keys: [user_id], size: 5m, aggregates: [count, {sum: amount}]}
sink: {kind: files, path: mem://out}
partitions: 2
state: {snapshot_every: 3}
`

// retWorld is a query's stores: mem://in, mem://out and the checkpoint.
type retWorld struct{ *enginetest.World }

func newRetWorld() *retWorld { return &retWorld{enginetest.NewWorld()} }

// writeInput writes input files [from, to): each file one 4-minute slice.
func (w *retWorld) writeInput(t *testing.T, from, to int) {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for f := from; f < to; f++ {
		var b strings.Builder
		for i := range 12 {
			ts := t0.Add(time.Duration(f)*4*time.Minute + time.Duration(i)*20*time.Second)
			fmt.Fprintf(&b, `{"ts":%q,"user_id":"u%d","page":"home","amount":%d}`+"\n", ts.Format(time.RFC3339), (f+i)%4, f*10+i)
		}
		if _, err := w.Store("in").Put(context.Background(), fmt.Sprintf("clicks-%03d.jsonl", f), []byte(b.String()), gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
}

// run runs the query over every input available, as process pid.
func (w *retWorld) run(t *testing.T, pid int) {
	t.Helper()
	ctx := context.Background()
	s, err := spec.Parse([]byte(retentionSpec))
	if err != nil {
		t.Fatal(err)
	}
	q, err := engine.Open(ctx, s, w.Options(nil, pid))
	if err != nil {
		t.Fatal(err)
	}
	err = q.Run(ctx, engine.Trigger{AvailableNow: true}, func(engine.Progress) {})
	if cerr := q.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("run (pid %d): %v", pid, err)
	}
}

// sink returns every row the sink's log names, sorted.
func (w *retWorld) sink(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	out := w.Store("out")
	files, _, err := checkpoint.ReadFileSinkLog(ctx, out, checkpoint.SinkMetadataDir)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, f := range files {
		key, ok := strings.CutPrefix(f.Path, "mem://out/")
		if !ok {
			t.Fatalf("sink file %s outside mem://out", f.Path)
		}
		data, _, err := out.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		for l := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				rows = append(rows, l)
			}
		}
	}
	slices.Sort(rows)
	return rows
}

const (
	firstInputs = 12
	moreInputs  = 4
)

// planAll plans the checkpoint and the sink output of w.
func (w *retWorld) planAll(t *testing.T, p lifecycle.RetentionPolicy) (cp, out *lifecycle.RetentionResult) {
	t.Helper()
	ctx := context.Background()
	l, err := lifecycle.ReadListing(ctx, w.CP, p)
	if err != nil {
		t.Fatal(err)
	}
	if cp, err = lifecycle.RetentionPlan(l, p); err != nil {
		t.Fatal(err)
	}
	sl, err := lifecycle.ReadSinkListing(ctx, w.Store("out"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err = lifecycle.RetentionPlan(sl, p); err != nil {
		t.Fatal(err)
	}
	return cp, out
}

// TestRetentionCrashAtEveryDelete runs a query for 12 batches, plans
// retention of the checkpoint and of the sink's manifest log
// (_spark_metadata/, as --sink does) with --min-batches 2, applies both
// through the retention policy (the checkpoint first) with a crash at
// delete k for every k, restarts the query on more input and compares the
// sink with a run that never had retention.
func TestRetentionCrashAtEveryDelete(t *testing.T) {
	ctx := context.Background()
	ref := newRetWorld()
	ref.writeInput(t, 0, firstInputs)
	ref.run(t, 1)
	ref.writeInput(t, firstInputs, firstInputs+moreInputs)
	ref.run(t, 2)
	want := ref.sink(t)
	if len(want) == 0 {
		t.Fatal("the reference sink is empty")
	}

	eng, err := policy.New(ctx, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := lifecycle.RetentionPolicy{MinBatches: 2, Now: time.Now()}
	base := newRetWorld()
	base.writeInput(t, 0, firstInputs)
	base.run(t, 1)
	plan, sinkPlan := base.planAll(t, p)
	stateRemoved := slices.ContainsFunc(plan.Remove, func(d lifecycle.Decision) bool { return strings.HasPrefix(d.Key, "state/") })
	if len(plan.Remove) < 10 || !stateRemoved {
		t.Fatalf("the plan removes %d keys (state: %v): too few to test", len(plan.Remove), stateRemoved)
	}
	if len(sinkPlan.Remove) < 5 {
		t.Fatalf("the sink plan removes %d manifests: too few to test", len(sinkPlan.Remove))
	}
	for _, d := range sinkPlan.Remove {
		if !strings.HasPrefix(d.Key, checkpoint.SinkMetadataDir+"/") {
			t.Fatalf("the sink plan removes %s", d.Key)
		}
	}
	total := len(plan.Remove) + len(sinkPlan.Remove)
	ks := []int{}
	for k := 1; k <= total+1; k++ {
		if total <= 60 || k%max(total/60, 1) == 0 || k <= 3 || k >= total-2 {
			ks = append(ks, k)
		}
	}
	for _, k := range ks {
		t.Run(fmt.Sprintf("crash-at-%d", k), func(t *testing.T) {
			w := newRetWorld()
			w.writeInput(t, 0, firstInputs)
			w.run(t, 1)
			r, sr := w.planAll(t, p)
			faults := gateway.NewFaults(gateway.Fault{Op: gateway.OpDelete, Nth: k, Action: gateway.Crash})
			auth := policy.NewAuthorizer(eng, policy.Principal{ID: "ret", Kind: policy.KindRetention}, "mem://cp",
				policy.Facts{}, nil, policy.WithPlan(&policy.Plan{ID: "t", Obsolete: r.Obsolete()}))
			st := gateway.WithAuthorizer(faults.Wrap(w.CP), auth)
			res, err := lifecycle.ApplyRetention(ctx, st, r, lifecycle.RetentionApplyOptions{Concurrency: 1})
			if err == nil {
				sauth := policy.NewAuthorizer(eng, policy.Principal{ID: "ret", Kind: policy.KindRetention}, "mem://out",
					policy.Facts{}, nil, policy.WithPlan(&policy.Plan{ID: "s", Obsolete: sr.Obsolete()}))
				var sres lifecycle.RetentionApplyResult
				sres, err = lifecycle.ApplyRetention(ctx, gateway.WithAuthorizer(faults.Wrap(w.Store("out")), sauth), sr, lifecycle.RetentionApplyOptions{Concurrency: 1})
				res.Deleted += sres.Deleted
			}
			n := len(r.Remove) + len(sr.Remove)
			switch {
			case k <= n && !errors.Is(err, gateway.ErrCrashed):
				t.Fatalf("apply: %v, want a crash at delete %d", err, k)
			case k > n && (err != nil || res.Deleted != n):
				t.Fatalf("apply: %v, %d deleted of %d", err, res.Deleted, n)
			}
			// What is left still restarts: inspect, read the sink's log,
			// then run more input.
			rep, err := checkpoint.Inspect(ctx, w.CP, checkpoint.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() {
				t.Fatalf("after a crash at delete %d the checkpoint is not OK: %s %+v", k, rep.Status, rep.Findings)
			}
			if _, _, err := checkpoint.ReadFileSinkLog(ctx, w.Store("out"), checkpoint.SinkMetadataDir); err != nil {
				t.Fatalf("after a crash at delete %d the sink log does not read: %v", k, err)
			}
			w.writeInput(t, firstInputs, firstInputs+moreInputs)
			w.run(t, 2)
			if got := w.sink(t); !slices.Equal(got, want) {
				t.Fatalf("after a crash at delete %d and a restart the sink holds %d rows, the reference %d\ngot:\n%s\nwant:\n%s",
					k, len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestRetentionPolicyRefusesUnplanned: through the authorizer, a retention
// principal can delete the planned keys only.
func TestRetentionPolicyRefusesUnplanned(t *testing.T) {
	ctx := context.Background()
	w := newRetWorld()
	w.writeInput(t, 0, 4)
	w.run(t, 1)
	eng, err := policy.New(ctx, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := lifecycle.RetentionPolicy{MinBatches: 1, Now: time.Now()}
	l, err := lifecycle.ReadListing(ctx, w.CP, p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := lifecycle.RetentionPlan(l, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Remove) == 0 || len(r.Keep) == 0 {
		t.Fatalf("plan removes %d and keeps %d keys", len(r.Remove), len(r.Keep))
	}
	auth := policy.NewAuthorizer(eng, policy.Principal{ID: "ret", Kind: policy.KindRetention}, "mem://cp",
		policy.Facts{}, nil, policy.WithPlan(&policy.Plan{ID: "t", Obsolete: r.Obsolete()}))
	st := gateway.WithAuthorizer(w.CP, auth)
	// A kept key is refused.
	evil := &lifecycle.RetentionResult{Remove: []lifecycle.Decision{{Key: r.Keep[0].Key}}}
	if _, err := lifecycle.ApplyRetention(ctx, st, evil, lifecycle.RetentionApplyOptions{}); !errors.Is(err, gateway.ErrDenied) {
		t.Fatalf("deleting kept key %s: %v, want ErrDenied", r.Keep[0].Key, err)
	}
	if _, _, err := w.CP.Get(ctx, r.Keep[0].Key); err != nil {
		t.Fatalf("the refused key is gone: %v", err)
	}
	var calls int
	res, err := lifecycle.ApplyRetention(ctx, st, r, lifecycle.RetentionApplyOptions{Concurrency: 4, Progress: func(done, total int) {
		calls++
		if total != len(r.Remove) || done != calls {
			t.Errorf("progress %d/%d after %d calls", done, total, calls)
		}
	}})
	if err != nil || res.Deleted != len(r.Remove) {
		t.Fatalf("apply: %v, deleted %d of %d", err, res.Deleted, len(r.Remove))
	}
	// Applying again finds nothing left.
	res, err = lifecycle.ApplyRetention(ctx, st, r, lifecycle.RetentionApplyOptions{})
	if err != nil || res.Missing != len(r.Remove) {
		t.Fatalf("re-apply: %v, %+v", err, res)
	}
}

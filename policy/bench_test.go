package policy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/sessiontest"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/policy"
)

// BenchmarkDecision: one gateway decision on the default policies, as the
// authorizer asks it for a batch's create-only log entry, with the latency
// distribution over the run. Goal: p99 < 100 µs.
func BenchmarkDecision(b *testing.B) {
	e := engine(b, policy.Options{})
	a := policy.NewAuthorizer(e, policy.Principal{ID: "svc-q1", Kind: policy.KindJob}, "s3://bucket/team/q1",
		policy.Facts{QueryID: "q1"}, nil, policy.WithWriterSession())
	ctx := context.Background()
	calls := []gateway.Call{
		{Op: gateway.OpPut, Key: "offsets/17", Cond: gateway.IfAbsent(), Size: 200},
		{Op: gateway.OpPut, Key: "commits/17", Cond: gateway.IfAbsent(), Size: 60},
		{Op: gateway.OpPut, Key: "state/0/3/18.delta", Cond: gateway.None(), Size: 4096},
		{Op: gateway.OpPut, Key: gateway.WriterKey, Cond: gateway.IfMatch("v"), Size: 300},
	}
	for range 3 { // warm up (each call shape is specialised), and check the answer
		for _, c := range calls {
			if err := check(a, ctx, c); err != nil {
				b.Fatalf("%s %s: %v", c.Op, c.Key, err)
			}
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := check(a, ctx, calls[i%len(calls)]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	cpu := cpuTime(b) - cpu0
	slices.Sort(lat)
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	benchsum.Record(b, "policy_decision_p50_us", p(0.50), "us", "<100")
	benchsum.Record(b, "policy_decision_p99_us", p(0.99), "us", "<100")
	// CPU time per decision (all threads, GC included): what a decision
	// costs whatever else the machine runs, unlike the wall-clock quantiles.
	benchsum.Record(b, "policy_decision_cpu_us", float64(cpu.Microseconds())/float64(b.N), "us", "")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecisionDenied: a refused delete, the path that builds an error
// naming the rule.
func BenchmarkDecisionDenied(b *testing.B) {
	e := engine(b, policy.Options{})
	a := policy.NewAuthorizer(e, policy.Principal{ID: "cron", Kind: policy.KindHousekeeping}, "s3://bucket/team/q1",
		policy.Facts{QueryID: "q1"}, nil)
	c := gateway.Call{Op: gateway.OpDelete, Key: "offsets/3"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := check(a, ctx, c); err == nil {
			b.Fatal("allowed")
		}
	}
}

// BenchmarkPolicyOverheadCommitLocal: a steady-state batch commit
// (sessiontest.Batch: writer check + two create-only log entries) on the
// local disk with the policy on and off. Two checkpoints take turns: in
// each round one commits with the policy and the other without, and the
// next round swaps them, so both figures see both directories and either
// order. Goal: the time the commits spend deciding < 10 % of the rest.
func BenchmarkPolicyOverheadCommitLocal(b *testing.B) {
	ctx := context.Background()
	e := engine(b, policy.Options{})
	var deciding atomic.Int64 // time spent in the policy's decisions
	type checkpoint struct {
		sess *gateway.Session
		on   atomic.Bool // the policy decides this checkpoint's mutations
	}
	open := func() *checkpoint {
		dir := b.TempDir()
		st, err := filestore.New(dir)
		if err != nil {
			b.Fatal(err)
		}
		cp := &checkpoint{}
		cp.on.Store(true)
		// the whole guard, as `ckgate run` has it: canonical locations,
		// the roots above them, the decision, the write's condition
		_, a, err := policy.Guard(st, policy.GuardConfig{Engine: e, Principal: policy.Principal{ID: "svc", Kind: policy.KindJob},
			StoreURL: dir, CheckpointRoot: true, WriterSession: true, Facts: policy.Facts{QueryID: "sessiontest-query"}})
		if err != nil {
			b.Fatal(err)
		}
		guarded := gateway.WithAuthorizer(st, gateway.AuthorizerFunc(func(ctx context.Context, c gateway.Call) (gateway.Cond, error) {
			if !cp.on.Load() {
				return c.Cond, nil
			}
			start := time.Now()
			cond, err := a.Authorize(ctx, c)
			deciding.Add(int64(time.Since(start)))
			return cond, err
		}))
		if cp.sess, err = gateway.OpenSession(ctx, guarded, sessiontest.Options(1)); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cp.sess.Close(ctx) })
		return cp
	}
	cps := [2]*checkpoint{open(), open()}
	for n := range 3 { // warm up with the policy on both (each call shape is specialised)
		for _, cp := range cps {
			if err := sessiontest.Batch(ctx, cp.sess, n); err != nil {
				b.Fatal(err)
			}
		}
	}
	deciding.Store(0)
	var tOn, tOff time.Duration
	b.ResetTimer()
	for i := range b.N {
		on := i % 2 // which checkpoint has the policy this round
		cps[on].on.Store(true)
		cps[1-on].on.Store(false)
		order := cps
		if (i/2)%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, cp := range order {
			start := time.Now()
			if err := sessiontest.Batch(ctx, cp.sess, i+3); err != nil {
				b.Fatal(fmt.Errorf("batch %d: %w", i+3, err))
			}
			if cp.on.Load() {
				tOn += time.Since(start)
			} else {
				tOff += time.Since(start)
			}
		}
	}
	b.StopTimer()
	// The overhead is the time the commits with the policy spent deciding,
	// against the rest of their time, measured inside the same commits. The
	// A/B difference of the means is recorded next to it: it also holds
	// what deciding costs the rest of the commit (caches, GC), but fsync
	// times vary by tens of percent from run to run.
	dec := time.Duration(deciding.Load())
	benchsum.Record(b, "policy_commit_local_on_us", float64(tOn.Microseconds())/float64(b.N), "us", "")
	benchsum.Record(b, "policy_commit_local_off_us", float64(tOff.Microseconds())/float64(b.N), "us", "")
	benchsum.Record(b, "policy_commit_local_deciding_us", float64(dec.Microseconds())/float64(b.N), "us", "")
	benchsum.Record(b, "policy_commit_local_overhead_pct", 100*float64(dec)/float64(tOn-dec), "%", "<10")
	benchsum.Record(b, "policy_commit_local_ab_overhead_pct", 100*(float64(tOn)-float64(tOff))/float64(tOff), "%", "")
}

// BenchmarkDecisionFloor: the same authorizer path on a one-line policy
// that allows every put, for calibration: the default policies' figures
// read against it separate their cost from the machine's speed and load.
func BenchmarkDecisionFloor(b *testing.B) {
	dir := b.TempDir()
	src := "package ckgate.gateway\n\ndecision := {\"allow\": true, \"deny\": []} if input.action == \"put\"\n"
	if err := os.WriteFile(filepath.Join(dir, "floor.rego"), []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	e := engine(b, policy.Options{NoDefaults: true, PolicyDirs: []string{dir}})
	a := policy.NewAuthorizer(e, policy.Principal{ID: "svc-q1", Kind: policy.KindJob}, "s3://bucket/team/q1",
		policy.Facts{QueryID: "q1"}, nil, policy.WithWriterSession())
	c := gateway.Call{Op: gateway.OpPut, Key: "offsets/17", Cond: gateway.IfAbsent(), Size: 200}
	ctx := context.Background()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for range b.N {
		if err := check(a, ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	benchsum.Record(b, "policy_decision_floor_cpu_us", float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "us", "")
}

// check is Authorize for the benchmarks that only look at the refusal.
func check(a *policy.Authorizer, ctx context.Context, c gateway.Call) error {
	_, err := a.Authorize(ctx, c)
	return err
}

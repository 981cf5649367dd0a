package backendtest

import (
	"context"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/sessiontest"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/policy"
)

// BenchmarkGuardedCommit is BenchmarkCommit with the whole guard in the
// path, as `ckgate run` has it: every mutation located canonically, the
// checkpoint roots above it found (on a cloud store through a store at the
// bucket, counted too) and decided by the default policies. Root discovery
// is done once per session and directory, so a steady-state batch still
// costs 3 requests.
func BenchmarkGuardedCommit(b *testing.B) {
	eachBench(b, func(b *testing.B, be *backend) {
		ctx := context.Background()
		raw := be.url(b)
		st := be.store(b, raw)
		count := be.requests
		var container gateway.Store
		if curl, err := gateway.ContainerURL(raw); err != nil {
			b.Fatal(err)
		} else if curl != "" {
			if container, err = stores.Open(ctx, curl); err != nil {
				b.Fatal(err)
			}
			defer gateway.Close(container)
		}
		if count == nil {
			m, err := gateway.NewMetrics(nil)
			if err != nil {
				b.Fatal(err)
			}
			st, count = m.Wrap(st, be.name), m.Total
		}
		eng, err := policy.New(ctx, policy.Options{})
		if err != nil {
			b.Fatal(err)
		}
		guarded, _, err := policy.Guard(st, policy.GuardConfig{Engine: eng, Principal: policy.Principal{ID: "svc", Kind: policy.KindJob},
			StoreURL: raw, CheckpointRoot: true, WriterSession: true, Facts: policy.Facts{QueryID: "sessiontest-query"}, Container: container})
		if err != nil {
			b.Fatal(err)
		}
		sess, err := gateway.OpenSession(ctx, guarded, sessiontest.Options(1))
		if err != nil {
			b.Fatal(err)
		}
		defer sess.Close(ctx)
		for n := range 3 { // discovery and specialisation happen here
			if err := sessiontest.Batch(ctx, sess, n); err != nil {
				b.Fatal(err)
			}
		}
		before := count()
		start := time.Now()
		b.ResetTimer()
		for i := range b.N {
			if err := sessiontest.Batch(ctx, sess, i+3); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		per := time.Since(start) / time.Duration(b.N)
		benchsum.Record(b, "commit_guarded_"+be.name+"_ms", float64(per.Microseconds())/1000, "ms", "")
		benchsum.Record(b, "commit_requests_guarded_"+be.name, float64(count()-before)/float64(b.N), "req", "<=3")
	})
}

package sessiontest_test

import (
	"context"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/benchsum"
)

// BenchmarkLeaseReleaseNotice: how long a second writer, waiting for a live
// owner's 30 s lease on the local disk, takes to hold the checkpoint after
// the owner releases it cleanly: from the owner's Close returning to the
// waiter's OpenSession returning. Goal: within a second (the worst round).
func BenchmarkLeaseReleaseNotice(b *testing.B) {
	ctx := context.Background()
	st := mustStore(b, b.TempDir())
	var total, worst time.Duration
	for i := range b.N {
		o := gateway.SessionOptions{QueryID: "q-bench", Host: "bench", Lease: 30 * time.Second, Heartbeat: -1,
			ProcessAlive: func(int) bool { return true }}
		o.PID = 2*i + 1
		owner, err := gateway.OpenSession(ctx, st, o)
		if err != nil {
			b.Fatal(err)
		}
		w := o
		w.PID = 2*i + 2
		w.TakeOver = gateway.Wait
		waiting := make(chan struct{})
		w.OnWait = func(gateway.WriterRecord, time.Time) { close(waiting) }
		type opened struct {
			sess *gateway.Session
			at   time.Time
			err  error
		}
		got := make(chan opened, 1)
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		go func() {
			sess, err := gateway.OpenSession(wctx, st, w)
			got <- opened{sess, time.Now(), err}
		}()
		<-waiting
		if err := owner.Close(ctx); err != nil {
			b.Fatal(err)
		}
		released := time.Now()
		r := <-got
		cancel()
		if r.err != nil {
			b.Fatalf("the waiter did not take over after the release: %v", r.err)
		}
		d := r.at.Sub(released)
		total += d
		worst = max(worst, d)
		if err := r.sess.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "mean_ms")
	benchsum.Record(b, "lease_release_notice_ms", float64(worst.Microseconds())/1000, "ms", "<=1000")
}

package backendtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/sessiontest"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/internal/emulator"
)

func eachBench(b *testing.B, f func(b *testing.B, be *backend)) {
	for _, be := range all {
		b.Run(be.name, func(b *testing.B) {
			emulator.Require(b, be.err)
			f(b, be)
		})
	}
}

// BenchmarkCommit: steady-state batch commit latency and requests per batch.
func BenchmarkCommit(b *testing.B) {
	eachBench(b, func(b *testing.B, be *backend) {
		ctx := context.Background()
		st, count := counted(b, be)
		sess, err := gateway.OpenSession(ctx, st, sessiontest.Options(1))
		if err != nil {
			b.Fatal(err)
		}
		defer sess.Close(ctx)
		if err := sessiontest.Batch(ctx, sess, 0); err != nil {
			b.Fatal(err)
		}
		before := count()
		start := time.Now()
		b.ResetTimer()
		for i := range b.N {
			if err := sessiontest.Batch(ctx, sess, i+1); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		per := time.Since(start) / time.Duration(b.N)
		benchsum.Record(b, "commit_"+be.name+"_ms", float64(per.Microseconds())/1000, "ms", "")
		benchsum.Record(b, "commit_requests_"+be.name, float64(count()-before)/float64(b.N), "req", "<=3")
	})
}

// BenchmarkRace: 16 writers race a create-only write of one key; exactly
// one may win.
func BenchmarkRace(b *testing.B) {
	eachBench(b, func(b *testing.B, be *backend) {
		ctx := context.Background()
		st := be.open(b)
		const writers = 16
		var total time.Duration
		b.ResetTimer()
		for i := range b.N {
			key := fmt.Sprintf("offsets/%d", i)
			var wg sync.WaitGroup
			var mu sync.Mutex
			wins := 0
			startLine := make(chan struct{})
			for w := range writers {
				wg.Go(func() {
					<-startLine
					_, err := st.Put(ctx, key, fmt.Appendf(nil, "writer %d", w), gateway.IfAbsent())
					switch {
					case err == nil:
						mu.Lock()
						wins++
						mu.Unlock()
					case !errors.Is(err, gateway.ErrExists):
						b.Errorf("writer %d: %v", w, err)
					}
				})
			}
			start := time.Now()
			close(startLine)
			wg.Wait()
			total += time.Since(start)
			if wins != 1 {
				b.Fatalf("race %d: %d winners, want 1", i, wins)
			}
		}
		b.StopTimer()
		benchsum.Record(b, "race16_"+be.name+"_ms", float64(total.Microseconds())/1000/float64(b.N), "ms", "")
	})
}

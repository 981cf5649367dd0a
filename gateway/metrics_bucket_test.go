package gateway_test

import (
	"context"
	"maps"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// TestMetricsOwnedByBucket: Metrics.Wrap on a Bucket returns a Bucket that
// counts its own calls (its optional operations stay native, a fallback's
// inner calls are not counted again), and counts exactly what the
// interceptor counts over any other Store, prefixed views included.
func TestMetricsOwnedByBucket(t *testing.T) {
	ctx := context.Background()
	calls := func(t *testing.T, s gateway.Store) {
		t.Helper()
		s.Put(ctx, "a/1", []byte("0123456789"), gateway.IfAbsent())
		s.Put(ctx, "a/1", []byte("x"), gateway.IfAbsent())   // lost race
		s.Put(ctx, "../escape", []byte("x"), gateway.None()) // refused key
		s.Get(ctx, "a/1")
		s.Get(ctx, "missing")
		s.Stat(ctx, "a/1")
		if rc, _, err := s.GetStream(ctx, "a/1"); err == nil {
			rc.Close()
		}
		for range s.List(ctx, "a/") {
			break // stopped early: still one call
		}
		for range s.List(ctx, "a/") {
		}
		if rc, _, err := gateway.GetRange(ctx, s, "a/1", 4, 3); err == nil {
			rc.Close()
		}
		gateway.ListPage(ctx, s, "", "/", "", 10)
		gateway.Copy(ctx, s, "a/1", "a/2", "", gateway.IfAbsent())
		s.Delete(ctx, "a/2", gateway.None())
	}
	counts := func(t *testing.T, wrap func(*gateway.Metrics, gateway.Store) gateway.Store) (map[gateway.Op]int64, map[gateway.Op]int64) {
		t.Helper()
		m, err := gateway.NewMetrics(nil)
		if err != nil {
			t.Fatal(err)
		}
		calls(t, wrap(m, memstore.New().WithPrefix("team/q1")))
		return m.Requests(), m.Failures()
	}
	var kept bool
	byBucket, bucketFailed := counts(t, func(m *gateway.Metrics, s gateway.Store) gateway.Store {
		w := m.Wrap(s, "mem")
		_, kept = w.(*gateway.Bucket)
		return w
	})
	if !kept {
		t.Fatal("Metrics.Wrap of a *Bucket did not return a *Bucket")
	}
	byInterceptor, interceptorFailed := counts(t, func(m *gateway.Metrics, s gateway.Store) gateway.Store {
		return m.Wrap(gateway.Intercept(s, func(ctx context.Context, _ gateway.Call, next func(context.Context) error) error {
			return next(ctx)
		}), "mem")
	})
	want := map[gateway.Op]int64{gateway.OpPut: 4, gateway.OpGet: 4, gateway.OpStat: 1, gateway.OpList: 3, gateway.OpDelete: 1}
	if !maps.Equal(byBucket, want) {
		t.Fatalf("bucket-owned requests %v, want %v", byBucket, want)
	}
	if !maps.Equal(byBucket, byInterceptor) || !maps.Equal(bucketFailed, interceptorFailed) {
		t.Fatalf("bucket-owned counts %v / failures %v differ from the interceptor's %v / %v",
			byBucket, bucketFailed, byInterceptor, interceptorFailed)
	}
}

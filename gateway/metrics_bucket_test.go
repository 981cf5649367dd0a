package gateway_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMetricsWrapBucketCountsItself: Metrics.Wrap of a Bucket is a view of
// it, still a *Bucket (its ranged read, page and copy stay native, it
// still makes buckets) sharing its driver, prefix and Close, and it counts
// one request per call, under the same ops and outcomes as an interceptor:
// a ranged read, a page and a copy once each, native or over the required
// methods, and the calls of its prefixed views.
func TestMetricsWrapBucketCountsItself(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    *gateway.Bucket
	}{
		{"native", memstore.New()},
		{"fallback", gateway.NewBucket(&closingDriver{Driver: memstore.New().Driver()}, "team")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			m, err := gateway.NewMetrics(prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			s := m.Wrap(tc.b, "mem")
			b, ok := s.(*gateway.Bucket)
			if !ok {
				t.Fatalf("Metrics.Wrap of a Bucket is a %T, want *gateway.Bucket", s)
			}
			if b.Driver() != tc.b.Driver() || b.Prefix() != tc.b.Prefix() {
				t.Fatalf("wrapped bucket has driver %T prefix %q, want %T %q", b.Driver(), b.Prefix(), tc.b.Driver(), tc.b.Prefix())
			}
			if _, ok := s.(gateway.BucketMaker); !ok {
				t.Fatal("Metrics.Wrap of a Bucket is no BucketMaker")
			}
			view := gateway.WithPrefix(s, "q1")
			calls := []struct {
				name    string
				op      gateway.Op
				outcome string
				call    func() error
			}{
				{"put", gateway.OpPut, "ok", func() error { _, err := b.Put(ctx, "src", []byte("0123456789"), gateway.IfAbsent()); return err }},
				{"lost put", gateway.OpPut, "exists", func() error { _, err := b.Put(ctx, "src", nil, gateway.IfAbsent()); return err }},
				{"stream put", gateway.OpPut, "ok", func() error {
					_, err := b.PutStream(ctx, "s", bytes.NewReader([]byte("x")), gateway.None())
					return err
				}},
				{"get", gateway.OpGet, "ok", func() error { _, _, err := b.Get(ctx, "src"); return err }},
				{"miss", gateway.OpGet, "not_found", func() error { _, _, err := b.Get(ctx, "missing"); return err }},
				{"bad key", gateway.OpGet, "error", func() error { _, _, err := b.Get(ctx, "/abs"); return err }},
				{"stream get", gateway.OpGet, "ok", func() error {
					rc, _, err := b.GetStream(ctx, "src")
					if err == nil {
						_, err = io.Copy(io.Discard, rc)
						rc.Close()
					}
					return err
				}},
				{"stat", gateway.OpStat, "ok", func() error { _, err := b.Stat(ctx, "src"); return err }},
				{"list", gateway.OpList, "ok", func() error {
					for _, err := range b.List(ctx, "") {
						if err != nil {
							return err
						}
					}
					return nil
				}},
				{"range", gateway.OpGet, "ok", func() error {
					rc, _, err := gateway.GetRange(ctx, s, "src", 4, 3)
					if err == nil {
						rc.Close()
					}
					return err
				}},
				{"page", gateway.OpList, "ok", func() error { _, err := gateway.ListPage(ctx, s, "", "/", "", 10); return err }},
				{"copy", gateway.OpPut, "ok", func() error { _, err := gateway.Copy(ctx, s, "src", "dst", "", gateway.IfAbsent()); return err }},
				{"stale copy", gateway.OpPut, "stale", func() error {
					_, err := gateway.Copy(ctx, s, "src", "dst", "", gateway.IfMatch("stale"))
					return err
				}},
				{"view put", gateway.OpPut, "ok", func() error { _, err := view.Put(ctx, "k", nil, gateway.IfAbsent()); return err }},
				{"delete", gateway.OpDelete, "ok", func() error { return b.Delete(ctx, "s", gateway.None()) }},
			}
			for _, c := range calls {
				total, ops := m.Total(), m.Requests()[c.op]
				before := testutil.ToFloat64(m.RequestCounter("mem", c.op, c.outcome))
				err := c.call()
				if (err == nil) != (c.outcome == "ok") {
					t.Fatalf("%s: %v, want outcome %s", c.name, err, c.outcome)
				}
				if got := m.Total() - total; got != 1 || m.Requests()[c.op]-ops != 1 {
					t.Errorf("%s: %d requests counted, %d as %s; want one %s", c.name, got, m.Requests()[c.op]-ops, c.op, c.op)
				}
				if got := testutil.ToFloat64(m.RequestCounter("mem", c.op, c.outcome)) - before; got != 1 {
					t.Errorf("%s: requests{op=%s,outcome=%s} rose by %v, want 1", c.name, c.op, c.outcome, got)
				}
			}
			if f := m.Failures(); f[gateway.OpGet] != 1 || len(f) != 1 {
				t.Errorf("failures %v, want the bad key's get only", f)
			}
			if _, _, err := tc.b.Get(ctx, "q1/k"); err != nil {
				t.Fatalf("the view's put is not in the bucket: %v", err)
			}
			total := m.Total()
			gateway.MakeBucket(ctx, s)
			if err := gateway.Close(s); err != nil {
				t.Fatal(err)
			}
			if m.Total() != total {
				t.Errorf("make bucket and close counted %d requests, want none", m.Total()-total)
			}
			if _, ok := tc.b.Driver().(gateway.Closer); ok {
				if _, _, err := tc.b.Get(ctx, "src"); !errors.Is(err, gateway.ErrClosed) {
					t.Errorf("bucket after closing its wrapped view: %v, want ErrClosed", err)
				}
			}
		})
	}
}

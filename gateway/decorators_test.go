package gateway_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsLostRaceIsNotAFailure(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	m, err := gateway.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	f := gateway.NewFaults(gateway.Fault{Op: gateway.OpGet, Prefix: "boom", Action: gateway.FailBefore})
	s := m.Wrap(f.Wrap(memstore.New()), "mem")
	s.Put(ctx, "k", []byte("a"), gateway.IfAbsent())
	s.Put(ctx, "k", []byte("b"), gateway.IfAbsent()) // lost race
	s.Put(ctx, "k", []byte("b"), gateway.IfMatch("stale"))
	s.Get(ctx, "missing")
	s.Get(ctx, "boom")
	for range s.List(ctx, "") {
	}
	if got := m.Requests(); got[gateway.OpPut] != 3 || got[gateway.OpGet] != 2 || got[gateway.OpList] != 1 {
		t.Fatalf("requests = %v", got)
	}
	if n := m.Failures()[gateway.OpPut]; n != 0 {
		t.Fatalf("put failures = %v, want 0 (a lost race is not a failure)", n)
	}
	if n := m.Failures()[gateway.OpGet]; n != 1 {
		t.Fatalf("get failures = %v, want 1 (the injected fault, not the miss)", n)
	}
	if n := testutil.ToFloat64(m.RequestCounter("mem", gateway.OpPut, "exists")); n != 1 {
		t.Fatalf("prometheus put/exists = %v, want 1", n)
	}
}

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
					_, err := b.PutStream(ctx, "s", strings.NewReader("x"), gateway.None())
					return err
				}},
				{"get", gateway.OpGet, "ok", func() error { _, _, err := b.Get(ctx, "src"); return err }},
				{"miss", gateway.OpGet, "not_found", func() error { _, _, err := b.Get(ctx, "missing"); return err }},
				{"bad key", gateway.OpGet, "error", func() error { _, _, err := b.Get(ctx, "/abs"); return err }},
				{"stream get", gateway.OpGet, "ok", func() error {
					rc, _, err := b.GetStream(ctx, "src")
					if err == nil {
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

func TestAuthorizerDecidesEveryMutation(t *testing.T) {
	ctx := context.Background()
	var seen []gateway.Call
	a := gateway.AuthorizerFunc(func(ctx context.Context, c gateway.Call) (gateway.Cond, error) {
		seen = append(seen, c)
		if strings.HasPrefix(c.Key, "commits/") && c.Op == gateway.OpDelete {
			return gateway.Cond{}, errors.New("rule ckgate.log.no_delete: committed log entries are never deleted")
		}
		return c.Cond, nil
	})
	inner := memstore.New()
	s := gateway.WithAuthorizer(inner, a)
	if _, err := s.Put(ctx, "commits/0", []byte("x"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	err := s.Delete(ctx, "commits/0", gateway.None())
	if !errors.Is(err, gateway.ErrDenied) || !strings.Contains(err.Error(), "ckgate.log.no_delete") || !strings.Contains(err.Error(), "commits/0") {
		t.Fatalf("delete: %v, want ErrDenied naming the rule and key", err)
	}
	if _, err := inner.Stat(ctx, "commits/0"); err != nil {
		t.Fatalf("denied delete touched the store: %v", err)
	}
	s.Get(ctx, "commits/0")
	for range s.List(ctx, "") {
	}
	if len(seen) != 2 || seen[0].Op != gateway.OpPut || seen[1].Op != gateway.OpDelete {
		t.Fatalf("authorizer saw %+v, want exactly the put and the delete", seen)
	}
}

func TestFaults(t *testing.T) {
	ctx := context.Background()
	t.Run("nth", func(t *testing.T) {
		f := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Prefix: "offsets/", Nth: 2, Action: gateway.FailBefore})
		s := f.Wrap(memstore.New())
		var errs []error
		for _, k := range []string{"offsets/0", "state/x", "offsets/1", "offsets/2"} {
			_, err := s.Put(ctx, k, nil, gateway.IfAbsent())
			errs = append(errs, err)
		}
		if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], gateway.ErrUnavailable) || errs[3] != nil {
			t.Fatalf("errors = %v, want only the 2nd offsets put to fail", errs)
		}
		if _, err := s.Stat(ctx, "offsets/1"); !errors.Is(err, gateway.ErrNotFound) {
			t.Fatalf("FailBefore wrote the object: %v", err)
		}
	})
	t.Run("fail after writes", func(t *testing.T) {
		f := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Nth: 1, Action: gateway.FailAfter, Err: context.DeadlineExceeded})
		s := f.Wrap(memstore.New())
		if _, err := s.Put(ctx, "k", nil, gateway.IfAbsent()); !errors.Is(err, gateway.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		if _, err := s.Stat(ctx, "k"); err != nil {
			t.Fatalf("FailAfter did not write: %v", err)
		}
	})
	t.Run("crash stops everything", func(t *testing.T) {
		f := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Prefix: "commits/", Nth: 1, Action: gateway.Crash})
		crashed := 0
		f.OnCrash = func() { crashed++ }
		inner := memstore.New()
		s := f.Wrap(inner)
		s.Put(ctx, "offsets/0", nil, gateway.IfAbsent())
		if _, err := s.Put(ctx, "commits/0", nil, gateway.IfAbsent()); !errors.Is(err, gateway.ErrCrashed) {
			t.Fatalf("err = %v", err)
		}
		if _, _, err := s.Get(ctx, "offsets/0"); !errors.Is(err, gateway.ErrCrashed) {
			t.Fatalf("read after crash: %v", err)
		}
		if _, err := inner.Stat(ctx, "commits/0"); !errors.Is(err, gateway.ErrNotFound) || crashed != 1 || !f.Crashed() {
			t.Fatalf("crash wrote commits/0 or did not call OnCrash (%d)", crashed)
		}
	})
	t.Run("delay honours the context", func(t *testing.T) {
		f := gateway.NewFaults(gateway.Fault{Op: gateway.OpGet, Action: gateway.Delay, Delay: time.Hour})
		s := f.Wrap(memstore.New())
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, _, err := s.Get(cctx, "k"); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestOpenRegistry(t *testing.T) {
	reg := gateway.NewRegistry().Register("mem", func(ctx context.Context, u *url.URL) (gateway.Store, error) {
		return memstore.New(), nil
	})
	if _, err := reg.Open(context.Background(), "mem://x"); err != nil {
		t.Fatal(err)
	}
	_, err := reg.Open(context.Background(), "s3://bucket/p?secret_key=hunter2")
	if err == nil || !strings.Contains(err.Error(), "known: mem") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("unknown scheme: %v", err)
	}
	u, err := gateway.ParseURL("relative/dir")
	if err != nil || u.Scheme != "file" || !strings.HasSuffix(u.Path, "/relative/dir") || !strings.HasPrefix(u.Path, "/") {
		t.Fatalf("plain path: %+v, %v", u, err)
	}
}

func TestMakeBucketThroughDecorators(t *testing.T) {
	s := gateway.WithPrefix(gateway.WithAuthorizer(memstore.New(), gateway.AuthorizerFunc(func(_ context.Context, c gateway.Call) (gateway.Cond, error) { return c.Cond, nil })), "p")
	if err := gateway.MakeBucket(context.Background(), s); !errors.Is(err, gateway.ErrUnsupported) {
		t.Fatalf("memstore has no bucket: %v", err)
	}
}

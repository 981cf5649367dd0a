package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/gateway/storetest"
)

// countingDriver counts the listing entries a driver hands the Bucket,
// through List and, when native is set, through its ListPage.
type countingDriver struct {
	gateway.Driver
	mu      sync.Mutex
	entries int
	pages   int
}

func (d *countingDriver) List(ctx context.Context, prefix string) iter.Seq2[gateway.Attrs, error] {
	return func(yield func(gateway.Attrs, error) bool) {
		for a, err := range d.Driver.List(ctx, prefix) {
			d.mu.Lock()
			d.entries++
			d.mu.Unlock()
			if !yield(a, err) {
				return
			}
		}
	}
}

// pagingDriver is a countingDriver with the native page of the driver below.
type pagingDriver struct{ *countingDriver }

func (d pagingDriver) ListPage(ctx context.Context, prefix, delim, after string, max int) (gateway.Page, error) {
	pg, err := d.Driver.(gateway.PageDriver).ListPage(ctx, prefix, delim, after, max)
	d.mu.Lock()
	d.pages++
	d.entries += len(pg.Objects) + len(pg.Prefixes)
	d.mu.Unlock()
	return pg, err
}

// TestListPageCostsOnePage: paging 1,000 keys by 100 through a driver
// with a native page hands the Bucket each entry once (one driver page per
// page); the fallback over List reads from the start for every page.
func TestListPageCostsOnePage(t *testing.T) {
	const total, per = 1000, 100
	for _, native := range []bool{true, false} {
		t.Run(fmt.Sprintf("native=%v", native), func(t *testing.T) {
			cd := &countingDriver{Driver: memstore.New().Driver()}
			var d gateway.Driver = cd
			if native {
				d = pagingDriver{cd}
			}
			b := gateway.NewBucket(d, "team")
			for i := range total {
				if _, err := b.Put(t.Context(), fmt.Sprintf("offsets/%04d", i), nil, gateway.IfAbsent()); err != nil {
					t.Fatal(err)
				}
			}
			cd.entries = 0
			after, pages, seen := "", 0, 0
			for {
				pg, err := b.ListPage(t.Context(), "offsets/", "/", after, per)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				seen += len(pg.Objects)
				if !pg.Truncated {
					break
				}
				after = pg.Next
			}
			if seen != total || pages != total/per+1 && pages != total/per {
				t.Fatalf("%d keys in %d pages, want %d in %d", seen, pages, total, total/per)
			}
			switch {
			case native && (cd.entries != total || cd.pages != pages):
				t.Errorf("native: the driver handed %d entries in %d pages for %d keys in %d pages", cd.entries, cd.pages, total, pages)
			case !native && cd.entries < total*pages/2:
				t.Errorf("fallback: %d entries read for %d pages: the counter does not see the rescans", cd.entries, pages)
			}
		})
	}
}

// badPageDriver answers a page that breaks the contract.
type badPageDriver struct {
	gateway.Driver
	page gateway.Page
}

func (d badPageDriver) ListPage(context.Context, string, string, string, int) (gateway.Page, error) {
	return d.page, nil
}

// TestBucketRefusesBadPages: a driver's page outside the prefix, out of
// order, not after after or too long is an unavailable error, never
// passed on.
func TestBucketRefusesBadPages(t *testing.T) {
	obj := func(k string) gateway.Attrs { return gateway.Attrs{Key: k} }
	for name, pg := range map[string]gateway.Page{
		"outside the prefix": {Objects: []gateway.Attrs{obj("other/x")}},
		"out of order":       {Objects: []gateway.Attrs{obj("p/q/b"), obj("p/q/a")}},
		"not after after":    {Objects: []gateway.Attrs{obj("p/q/0")}},
		"too long":           {Prefixes: []string{"p/q/x/", "p/q/y/", "p/q/z/"}},
		"prefixes unordered": {Prefixes: []string{"p/q/y/", "p/q/x/"}},
		"next going back":    {Objects: []gateway.Attrs{obj("p/q/x")}, Truncated: true, Next: "p/q/0"},
	} {
		b := gateway.NewBucket(badPageDriver{memstore.New().Driver(), pg}, "p")
		_, err := b.ListPage(t.Context(), "q/", "/", "q/1", 2)
		storetest.WantKeyKind(t, name, err, "q/", gateway.ErrUnavailable)
	}
	// The common prefix after is in, reported again, is dropped.
	b := gateway.NewBucket(badPageDriver{memstore.New().Driver(), gateway.Page{Prefixes: []string{"p/q/1/", "p/q/2/"}}}, "p")
	pg, err := b.ListPage(t.Context(), "q/", "/", "q/1/x", 2)
	if err != nil || len(pg.Prefixes) != 1 || pg.Prefixes[0] != "q/2/" {
		t.Fatalf("page %+v, %v; want only q/2/", pg, err)
	}
}

// recording is an authorizer that records the calls it decides and
// answers with cond (or err).
type recording struct {
	mu    sync.Mutex
	calls []gateway.Call
	cond  *gateway.Cond
	err   error
}

func (r *recording) Authorize(_ context.Context, c gateway.Call) (gateway.Cond, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	if r.cond != nil {
		return *r.cond, r.err
	}
	return c.Cond, r.err
}

// TestAuthorizedCopyIsDecidedAsAPut: a copy through an authorized store
// is decided as a PutStream of dst is (one call, the same op, key,
// condition and size), writes with the condition the decision returned,
// and writes nothing when refused.
func TestAuthorizedCopyIsDecidedAsAPut(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	for _, k := range []string{"offsets/.0.tmp", "offsets/0"} {
		if _, err := ms.Put(ctx, k, []byte(k), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	ifAbsent := gateway.IfAbsent()
	r := &recording{cond: &ifAbsent}
	s := gateway.WithAuthorizer(ms, r)
	_, err := gateway.Copy(ctx, s, "offsets/.0.tmp", "offsets/0", "", gateway.None())
	storetest.WantKeyKind(t, "copy with the decision's if-absent onto an existing dst", err, "offsets/0", gateway.ErrExists)
	if _, err := s.PutStream(ctx, "offsets/0", strings.NewReader(""), gateway.None()); !errors.Is(err, gateway.ErrExists) {
		t.Fatalf("put stream: %v", err)
	}
	if len(r.calls) != 2 || r.calls[0] != r.calls[1] {
		t.Fatalf("decided %+v, want the copy decided as the put stream of dst", r.calls)
	}
	if c := r.calls[0]; c.Op != gateway.OpPut || c.Key != "offsets/0" || c.Cond != gateway.None() {
		t.Errorf("decided %+v", c)
	}

	r = &recording{err: errors.New("no")}
	s = gateway.WithAuthorizer(ms, r)
	_, err = gateway.Copy(ctx, s, "offsets/.0.tmp", "offsets/1", "", gateway.IfAbsent())
	if !errors.Is(err, gateway.ErrDenied) || len(r.calls) != 1 {
		t.Fatalf("denied copy: %v after %d decisions", err, len(r.calls))
	}
	if _, err := ms.Stat(ctx, "offsets/1"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("a denied copy wrote: %v", err)
	}

	// Behind another decorator the copy falls back to a decided PutStream.
	r = &recording{err: errors.New("no")}
	s = gateway.Intercept(gateway.WithAuthorizer(ms, r), func(ctx context.Context, c gateway.Call, next func(context.Context) error) error { return next(ctx) })
	_, err = gateway.Copy(ctx, s, "offsets/.0.tmp", "offsets/1", "", gateway.IfAbsent())
	if !errors.Is(err, gateway.ErrDenied) || len(r.calls) != 1 {
		t.Fatalf("denied copy behind a decorator: %v after %d decisions", err, len(r.calls))
	}
}

// TestInterceptedOptionalCalls: through an interceptor (metrics, faults) a
// ranged read, a page and a copy are one call each, a copy seen as the put
// of its destination, and a fault refuses it before the store is touched.
func TestInterceptedOptionalCalls(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	if _, err := ms.Put(ctx, "src", []byte("0123456789"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	m, err := gateway.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Wrap(ms, "mem")
	rc, _, err := gateway.GetRange(ctx, s, "src", 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if _, err := gateway.ListPage(ctx, s, "", "/", "", 10); err != nil {
		t.Fatal(err)
	}
	if _, err := gateway.Copy(ctx, s, "src", "dst", "", gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if got := m.Requests(); got[gateway.OpGet] != 1 || got[gateway.OpList] != 1 || got[gateway.OpPut] != 1 || len(got) != 3 {
		t.Fatalf("requests %v, want one get, one list, one put", got)
	}
	f := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Prefix: "dst2", Nth: 1, Action: gateway.FailBefore})
	_, err = gateway.Copy(ctx, f.Wrap(ms), "src", "dst2", "", gateway.IfAbsent())
	storetest.WantKeyKind(t, "copy under a fault", err, "dst2", gateway.ErrUnavailable)
	if _, err := ms.Stat(ctx, "dst2"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("a copy refused by a fault wrote: %v", err)
	}
}

package gcsstore

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/api/googleapi"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/backendtest"
	"github.com/ckgate/ckgate/gateway/storetest"
)

func TestMakeBucketTwice(t *testing.T) {
	backendtest.WantMakeBucketTwice(t, newStore(t))
}

func TestMissingBucket(t *testing.T) {
	s := New(newClient(t, nil), bucketName(), "")
	_, _, err := s.Get(t.Context(), "k")
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrNotFound)
	_, err = s.Put(t.Context(), "k", []byte("x"), gateway.IfAbsent())
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrNotFound)
	for _, err := range s.List(t.Context(), "") {
		storetest.WantKeyKind(t, "", err, "", gateway.ErrNotFound)
	}
}

// TestBackendPrefix: New's prefix is applied inside the bucket; keys
// outside it are invisible, errors and listings use the caller's keys, and
// the 1,024-byte name limit counts the prefix.
func TestBackendPrefix(t *testing.T) {
	client := newClient(t, nil)
	root := newStoreOn(t, client, "")
	s := New(client, root.BucketName(), "/tenant/q1/")
	if s.Prefix() != "tenant/q1/" {
		t.Fatalf("prefix %q", s.Prefix())
	}
	ctx := t.Context()
	for _, k := range []string{"tenant/q1x", "tenant/q10/a", "tenant/other", "z"} {
		if _, err := root.Put(ctx, k, []byte(k), gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
	v, err := s.Put(ctx, "commits/0", []byte("c"), gateway.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, root, "tenant/q1/commits/0", "c", v)
	if got := storetest.Keys(t, s, ""); !reflect.DeepEqual(got, []string{"commits/0"}) {
		t.Errorf("list = %q, want [commits/0]", got)
	}
	a, err := s.Stat(ctx, "commits/0")
	if err != nil || a.Key != "commits/0" {
		t.Errorf("stat = %+v, %v", a, err)
	}
	_, _, err = s.Get(ctx, "missing")
	storetest.WantKeyKind(t, "", err, "missing", gateway.ErrNotFound)

	fits := strings.Repeat("k", maxObjectName-len(s.Prefix()))
	if _, err := s.Put(ctx, fits, []byte("x"), gateway.IfAbsent()); err != nil {
		t.Errorf("put of a name of exactly %d bytes: %v", maxObjectName, err)
	}
	_, err = s.Put(ctx, fits+"k", []byte("x"), gateway.IfAbsent())
	storetest.WantKeyKind(t, "", err, fits+"k", gateway.ErrInvalidKey)
}

// TestGCSInvalidNames: names GCS refuses are ErrInvalidKey before any
// request.
func TestGCSInvalidNames(t *testing.T) {
	s := New(newRawClient(t, &statusTransport{code: 500}), "no-such-bucket", "")
	for _, key := range []string{"a\rb", "a\nb", ".well-known/acme-challenge/x"} {
		_, err := s.Put(t.Context(), key, []byte("x"), gateway.None())
		storetest.WantKeyKind(t, "", err, key, gateway.ErrInvalidKey)
		_, _, err = s.Get(t.Context(), key)
		storetest.WantKeyKind(t, "", err, key, gateway.ErrInvalidKey)
		storetest.WantKeyKind(t, "", s.Delete(t.Context(), key, gateway.None()), key, gateway.ErrInvalidKey)
	}
}

// TestListSkipsPlaceholders: "directory" objects (names ending in '/')
// are no keys and are not listed.
func TestListSkipsPlaceholders(t *testing.T) {
	s := newStore(t)
	w := s.d.bucket.Object("offsets/").NewWriter(t.Context())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(t.Context(), "offsets/0", []byte("0"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	if got := storetest.Keys(t, s, ""); !reflect.DeepEqual(got, []string{"offsets/0"}) {
		t.Errorf("list = %q, want [offsets/0]", got)
	}
}

// brokenBody yields n bytes of the real body, then fails.
type brokenBody struct {
	io.ReadCloser
	n int
}

var errBodyBroke = errors.New("injected: body broke")

func (b *brokenBody) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, errBodyBroke
	}
	n, err := b.ReadCloser.Read(p[:min(len(p), b.n)])
	b.n -= n
	return n, err
}

// TestGetStreamReadError: an error while reading a stream is a
// *gateway.Error of the stream's key, with the cause reachable. The
// library reopens a broken body with a ranged read; here every reopen is
// answered 503.
func TestGetStreamReadError(t *testing.T) {
	s := newStore(t)
	if _, err := s.Put(t.Context(), "k", []byte(strings.Repeat("x", 1<<16)), gateway.None()); err != nil {
		t.Fatal(err)
	}
	var gets atomic.Int32
	rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			return http.DefaultTransport.RoundTrip(req)
		}
		if gets.Add(1)%2 == 0 {
			return (&statusTransport{code: http.StatusServiceUnavailable}).RoundTrip(req)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil {
			resp.Body = &brokenBody{ReadCloser: resp.Body, n: 100}
		}
		return resp, err
	})
	broken := New(newClient(t, rt), s.BucketName(), "", WithMaxAttempts(1))
	rc, _, err := broken.GetStream(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	n, err := io.Copy(io.Discard, rc)
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrUnavailable)
	if n != 100 {
		t.Errorf("read %d bytes before the error, want 100", n)
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != http.StatusServiceUnavailable {
		t.Errorf("the 503 is not reachable from %q", err)
	}
	_, _, err = broken.Get(t.Context(), "k")
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrUnavailable)
}

// listCounter counts object list requests.
type listCounter struct {
	base  http.RoundTripper
	lists atomic.Int32
}

func (l *listCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/o") {
		l.lists.Add(1)
	}
	return l.base.RoundTrip(req)
}

// TestListPages: a listing of more than 1,000 keys takes several list
// requests (pages of 1,000) and yields every key once, in order.
func TestListPages(t *testing.T) {
	lc := &listCounter{base: http.DefaultTransport}
	s := newStoreOn(t, newClient(t, lc), "")
	const n = 1001
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("k/%04d", i))
	}
	work := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for k := range work {
				if _, err := s.Put(t.Context(), k, nil, gateway.IfAbsent()); err != nil {
					t.Errorf("put %q: %v", k, err)
				}
			}
		})
	}
	for _, k := range want {
		work <- k
	}
	close(work)
	wg.Wait()
	lc.lists.Store(0)
	if got := storetest.Keys(t, s, "k/"); !reflect.DeepEqual(got, want) {
		t.Errorf("list: %d keys, want %d in order", len(got), len(want))
	}
	if got := lc.lists.Load(); got != 2 {
		t.Errorf("%d list requests for %d keys, want 2 pages", got, n)
	}
}

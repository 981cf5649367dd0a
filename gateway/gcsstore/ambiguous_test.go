package gcsstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
	"github.com/ckgate/ckgate/internal/emulator"
)

// lostResponse is what a client sees when a response never arrives: a
// timeout the library classifies as retryable.
type lostResponse struct{}

func (lostResponse) Error() string   { return "injected: response lost (timeout)" }
func (lostResponse) Timeout() bool   { return true }
func (lostResponse) Temporary() bool { return true }

// failFirst intercepts the first request that match accepts. With forward
// the request is performed and its response dropped (the write happened but
// the caller never hears of it); otherwise before runs (e.g. a rival's
// write) and the request is not sent. The attempt then fails with a lost
// response, or answers status when set. Later requests pass through.
type failFirst struct {
	base    http.RoundTripper // nil: http.DefaultTransport
	match   func(*http.Request) bool
	forward bool
	before  func()
	status  int
	n       atomic.Int32 // matching requests seen
}

func (f *failFirst) RoundTrip(req *http.Request) (*http.Response, error) {
	base := f.base
	if base == nil {
		base = http.DefaultTransport
	}
	if !f.match(req) || f.n.Add(1) != 1 {
		return base.RoundTrip(req)
	}
	if f.forward {
		resp, err := base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	} else {
		if req.Body != nil {
			_, _ = io.Copy(io.Discard, req.Body)
			req.Body.Close()
		}
		if f.before != nil {
			f.before()
		}
	}
	if f.status != 0 {
		return (&statusTransport{code: f.status}).RoundTrip(req)
	}
	return nil, lostResponse{}
}

func isUpload(req *http.Request) bool {
	return req.Method == http.MethodPost && strings.HasPrefix(req.URL.Path, "/upload/storage/v1/")
}

func isObjectDelete(req *http.Request) bool {
	return req.Method == http.MethodDelete && strings.Contains(req.URL.Path, "/o/")
}

// wantObject fails unless key holds data at version v (v "" skips that).
func wantObject(t *testing.T, s gateway.Store, key, data string, v gateway.Version) {
	t.Helper()
	got, gv, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	if string(got) != data {
		t.Errorf("get %q = %q, want %q", key, got, data)
	}
	if v != "" && gv != v {
		t.Errorf("get %q: version %q, want %q", key, gv, v)
	}
}

// TestAmbiguousCreate: the first create-only upload lands but its response
// is lost; the library retries, the retry is answered 412, and Put must
// report the success it had, with the stored generation.
func TestAmbiguousCreate(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			s := newStore(t)
			lose := &failFirst{match: isUpload, forward: true}
			ambiguous := New(newClient(t, lose), s.BucketName(), "")
			const key, data = "offsets/5", "batch 5 epoch 2"
			var v gateway.Version
			var err error
			if stream {
				v, err = ambiguous.PutStream(t.Context(), key, strings.NewReader(data), gateway.IfAbsent())
			} else {
				v, err = ambiguous.Put(t.Context(), key, []byte(data), gateway.IfAbsent())
			}
			if err != nil {
				t.Fatalf("put after a lost response: %v", err)
			}
			if n := lose.n.Load(); n < 2 {
				t.Fatalf("upload attempts = %d: the library did not retry, the test proves nothing", n)
			}
			wantObject(t, s, key, data, v)

			// The resolution does not turn a real loss into a success.
			_, err = ambiguous.Put(t.Context(), key, []byte(data), gateway.IfAbsent())
			storetest.WantKeyKind(t, "", err, key, gateway.ErrExists)
		})
	}
}

// TestAmbiguousCAS: the same for compare-and-swap.
func TestAmbiguousCAS(t *testing.T) {
	s := newStore(t)
	const key = "_ckgate/writer"
	v1, err := s.Put(t.Context(), key, []byte("epoch=1"), gateway.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	lose := &failFirst{match: isUpload, forward: true}
	ambiguous := New(newClient(t, lose), s.BucketName(), "")
	v2, err := ambiguous.Put(t.Context(), key, []byte("epoch=2"), gateway.IfMatch(v1))
	if err != nil {
		t.Fatalf("CAS after a lost response: %v", err)
	}
	if lose.n.Load() < 2 {
		t.Fatal("the library did not retry")
	}
	if v2 == v1 {
		t.Fatalf("CAS returned the old version %q", v1)
	}
	wantObject(t, s, key, "epoch=2", v2)
}

// TestAmbiguousLoss: the first attempt never reaches the service, a rival
// creates the key meanwhile with the very same bytes, and the retry is
// answered 412. That is a lost race, not a success: the content is equal
// but the write id is not this write's.
func TestAmbiguousLoss(t *testing.T) {
	s := newStore(t)
	const key, data = "commits/9", "same bytes from two writers"
	var rivalV gateway.Version
	lose := &failFirst{match: isUpload, before: func() {
		var err error
		rivalV, err = s.Put(t.Context(), key, []byte(data), gateway.IfAbsent())
		if err != nil {
			t.Errorf("rival put: %v", err)
		}
	}}
	loser := New(newClient(t, lose), s.BucketName(), "")
	_, err := loser.Put(t.Context(), key, []byte(data), gateway.IfAbsent())
	storetest.WantKeyKind(t, "", err, key, gateway.ErrExists)
	if lose.n.Load() < 2 {
		t.Fatal("the library did not retry")
	}
	wantObject(t, s, key, data, rivalV)
}

// TestAmbiguousUnresolved: when the read-back that would resolve an
// ambiguous 412 fails, the outcome is unknown: the error is ErrUnknownOutcome,
// neither success nor ErrExists.
func TestAmbiguousUnresolved(t *testing.T) {
	s := newStore(t)
	var uploads atomic.Int32
	// First upload: performed, response lost. Retry: 412. Read-back: 503.
	rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		switch {
		case isUpload(req) && uploads.Add(1) == 1:
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				return nil, err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return nil, lostResponse{}
		case req.Method == http.MethodGet:
			return (&statusTransport{code: http.StatusServiceUnavailable}).RoundTrip(req)
		}
		return http.DefaultTransport.RoundTrip(req)
	})
	ambiguous := New(newClient(t, rt), s.BucketName(), "", WithMaxAttempts(2))
	_, err := ambiguous.Put(t.Context(), "k", []byte("x"), gateway.IfAbsent())
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrUnknownOutcome)
	if !isPrecondition(err) {
		t.Errorf("the 412 is not reachable from %q", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestAmbiguousDelete: a conditional delete that landed but whose response
// was lost is retried, finds the object gone, and reports success.
func TestAmbiguousDelete(t *testing.T) {
	s := newStore(t)
	v, err := s.Put(t.Context(), "state/1.delta", []byte("d"), gateway.None())
	if err != nil {
		t.Fatal(err)
	}
	// The lost response sits above the delete-condition shim, so that it
	// sees every attempt.
	lose := &failFirst{base: emulator.GCSDeleteConditions(nil), match: isObjectDelete, forward: true}
	ambiguous := New(newRawClient(t, lose), s.BucketName(), "")
	if err := ambiguous.Delete(t.Context(), "state/1.delta", gateway.IfMatch(v)); err != nil {
		t.Fatalf("delete after a lost response: %v", err)
	}
	if lose.n.Load() < 2 {
		t.Fatal("the library did not retry")
	}
	_, err = s.Stat(t.Context(), "state/1.delta")
	storetest.WantKeyKind(t, "", err, "state/1.delta", gateway.ErrNotFound)
}

// TestUnconditionalDeleteNotRetried: an unconditional delete is not
// idempotent, so the library does not retry it and a lost response is an
// error, not a guess.
func TestUnconditionalDeleteNotRetried(t *testing.T) {
	s := newStore(t)
	if _, err := s.Put(t.Context(), "x", []byte("d"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	lose := &failFirst{match: isObjectDelete, forward: true}
	ambiguous := New(newClient(t, lose), s.BucketName(), "")
	err := ambiguous.Delete(t.Context(), "x", gateway.None())
	storetest.WantKeyKind(t, "", err, "x", gateway.ErrUnavailable)
	if !errors.As(err, new(lostResponse)) {
		t.Errorf("the transport error is not reachable from %q", err)
	}
	if n := lose.n.Load(); n != 1 {
		t.Errorf("delete attempts = %d, want 1", n)
	}
}

// TestWriteIDStored: every write carries its write id in the object's
// metadata, a different one each time.
func TestWriteIDStored(t *testing.T) {
	s := newStore(t)
	ids := map[string]bool{}
	for i, c := range []gateway.Cond{gateway.IfAbsent(), gateway.None()} {
		if _, err := s.Put(t.Context(), "m", bytes.Repeat([]byte{'m'}, i+1), c); err != nil {
			t.Fatal(err)
		}
		a, err := s.d.bucket.Object("m").Attrs(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		id := a.Metadata[WriteIDKey]
		if id == "" || ids[id] {
			t.Fatalf("write %d: write id %q (seen before: %v)", i, id, ids[id])
		}
		ids[id] = true
	}
}

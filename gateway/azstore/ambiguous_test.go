package azstore

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
)

// hookTransport sends requests to Azurite through hook, which may do the
// request, skip it, or fail it.
type hookTransport struct {
	mu   sync.Mutex
	hook func(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error)
}

var plainHTTP = &http.Client{}

func (h *hookTransport) Do(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	hook := h.hook
	h.mu.Unlock()
	if hook == nil {
		return plainHTTP.Do(req)
	}
	return hook(req, plainHTTP.Do)
}

func (h *hookTransport) set(hook func(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error)) {
	h.mu.Lock()
	h.hook = hook
	h.mu.Unlock()
}

// isWrite reports whether req writes a blob: Put Blob or Put Block List.
func isWrite(req *http.Request) bool {
	comp := req.URL.Query().Get("comp")
	return req.Method == http.MethodPut && (comp == "" || comp == "blocklist") &&
		req.URL.Query().Get("restype") != "container"
}

// appliedThenTimeout returns a hook that lets the first request matching
// match reach the service, then reports a timeout to the client, as a
// connection lost after the service applied the write. The pipeline then
// retries.
func appliedThenTimeout(match func(*http.Request) bool) (func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error), *int) {
	var mu sync.Mutex
	fired := 0
	return func(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		mu.Lock()
		first := fired == 0 && match(req)
		if first {
			fired++
		}
		mu.Unlock()
		resp, err := send(req)
		if !first || err != nil {
			return resp, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			return nil, errors.New("the injected write itself failed: " + resp.Status)
		}
		return nil, timeoutError{}
	}, &fired
}

// newHookedStore returns a store whose pipeline goes through a hook
// transport, and a plain store on the same container.
func newHookedStore(t *testing.T, opts *container.ClientOptions) (*Store, *hookTransport, *Store) {
	t.Helper()
	requireAzurite(t)
	ht := &hookTransport{}
	if opts == nil {
		opts = testClientOptions()
	}
	opts.Transport = ht
	s := newStoreWith(t, "", opts)
	plain := New(newClientAt(t, s.Client().URL()), "")
	return s, ht, plain
}

func newClientAt(t *testing.T, containerURL string) *container.Client {
	t.Helper()
	cred, err := container.NewSharedKeyCredential(azurite.Account, azurite.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := container.NewClientWithSharedKeyCredential(containerURL, cred, testClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAmbiguousCreateResolved: a create-only Put whose first attempt was
// applied but timed out is retried by the pipeline and refused (409 on
// Azurite); the store reads its own write id back and reports success.
func TestAmbiguousCreateResolved(t *testing.T) {
	s, ht, plain := newHookedStore(t, nil)
	hook, fired := appliedThenTimeout(isWrite)
	ht.set(hook)
	v, err := s.Put(t.Context(), "offsets/7", []byte("batch 7"), gateway.IfAbsent())
	ht.set(nil)
	if *fired != 1 {
		t.Fatalf("fault fired %d times", *fired)
	}
	if err != nil {
		t.Fatalf("put after an applied-then-timed-out attempt: %v", err)
	}
	a, err := plain.Stat(t.Context(), "offsets/7")
	if err != nil || a.Version != v {
		t.Fatalf("stat = %+v, %v; put returned version %q", a, err, v)
	}
	// A second create is refused plainly.
	_, err = s.Put(t.Context(), "offsets/7", []byte("batch 7"), gateway.IfAbsent())
	storetest.WantKeyKind(t, "", err, "offsets/7", gateway.ErrExists)
}

// TestAmbiguousCreateLost: the first attempt never reached the service and
// another writer created the key meanwhile; the retried create is refused
// and the read-back finds the other writer's id (even with equal bytes):
// ErrExists, not a false success.
func TestAmbiguousCreateLost(t *testing.T) {
	s, ht, plain := newHookedStore(t, nil)
	var once sync.Once
	ht.set(func(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		lost := false
		if isWrite(req) {
			once.Do(func() {
				lost = true
				if _, err := plain.Put(req.Context(), "offsets/7", []byte("batch 7"), gateway.IfAbsent()); err != nil {
					t.Errorf("competitor: %v", err)
				}
			})
		}
		if lost {
			return nil, timeoutError{}
		}
		return send(req)
	})
	_, err := s.Put(t.Context(), "offsets/7", []byte("batch 7"), gateway.IfAbsent())
	ht.set(nil)
	storetest.WantKeyKind(t, "", err, "offsets/7", gateway.ErrExists)
}

// TestAmbiguousCASResolved: the same for IfMatch (the retry gets 412).
func TestAmbiguousCASResolved(t *testing.T) {
	s, ht, plain := newHookedStore(t, nil)
	v1, err := s.Put(t.Context(), "_ckgate/writer", []byte("epoch 1"), gateway.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	hook, fired := appliedThenTimeout(isWrite)
	ht.set(hook)
	v2, err := s.Put(t.Context(), "_ckgate/writer", []byte("epoch 2"), gateway.IfMatch(v1))
	ht.set(nil)
	if *fired != 1 || err != nil {
		t.Fatalf("CAS after an applied-then-timed-out attempt: fired %d, %v", *fired, err)
	}
	got, v, err := plain.Get(t.Context(), "_ckgate/writer")
	if err != nil || v != v2 || string(got) != "epoch 2" {
		t.Fatalf("get = %q %q %v, want epoch 2 at %q", got, v, err, v2)
	}
	_, err = s.Put(t.Context(), "_ckgate/writer", []byte("epoch 3"), gateway.IfMatch(v1))
	storetest.WantKeyKind(t, "", err, "_ckgate/writer", gateway.ErrPrecondition)
}

// TestAmbiguousStreamCommitResolved: the same for the block-list commit
// of PutStream.
func TestAmbiguousStreamCommitResolved(t *testing.T) {
	s, ht, plain := newHookedStore(t, nil)
	s.d.blockSize = 1 << 10
	data := bytes.Repeat([]byte("0123456789abcdef"), 300) // 4.8 KiB: 5 blocks
	hook, fired := appliedThenTimeout(func(r *http.Request) bool {
		return isWrite(r) && r.URL.Query().Get("comp") == "blocklist"
	})
	ht.set(hook)
	v, err := s.PutStream(t.Context(), "state/0/1.delta", bytes.NewReader(data), gateway.IfAbsent())
	ht.set(nil)
	if *fired != 1 || err != nil {
		t.Fatalf("stream after an applied-then-timed-out commit: fired %d, %v", *fired, err)
	}
	got, gv, err := plain.Get(t.Context(), "state/0/1.delta")
	if err != nil || gv != v || !bytes.Equal(got, data) {
		t.Fatalf("get = %d bytes at %q, %v; want %d bytes at %q", len(got), gv, err, len(data), v)
	}
}

// TestAmbiguousDeleteResolved: a delete applied then timed out is retried,
// finds the blob gone, and succeeds.
func TestAmbiguousDeleteResolved(t *testing.T) {
	s, ht, plain := newHookedStore(t, nil)
	if _, err := s.Put(t.Context(), "k", []byte("x"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	hook, fired := appliedThenTimeout(func(r *http.Request) bool { return r.Method == http.MethodDelete })
	ht.set(hook)
	err := s.Delete(t.Context(), "k", gateway.None())
	ht.set(nil)
	if *fired != 1 || err != nil {
		t.Fatalf("delete after an applied-then-timed-out attempt: fired %d, %v", *fired, err)
	}
	if _, err := plain.Stat(t.Context(), "k"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("stat after delete: %v", err)
	}
	storetest.WantKeyKind(t, "", s.Delete(t.Context(), "k", gateway.None()), "k", gateway.ErrNotFound)
}

// TestAmbiguousUnreadable: when the read-back fails too, the outcome is
// unknown, never a guess.
func TestAmbiguousUnreadable(t *testing.T) {
	s, ht, _ := newHookedStore(t, nil)
	apply, _ := appliedThenTimeout(isWrite)
	ht.set(func(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if req.Method == http.MethodHead {
			return nil, timeoutError{}
		}
		return apply(req, send)
	})
	_, err := s.Put(t.Context(), "k", []byte("x"), gateway.IfAbsent())
	ht.set(nil)
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrUnknownOutcome)
	if !strings.Contains(err.Error(), "409") {
		t.Errorf("message %q does not keep the refusal", err)
	}
}

// TestAmbiguousWithoutTracking: a client built without ClientOptions does
// not count its attempts, yet the refusal of its own retried write is still
// told from a lost race by the write id the blob carries: it succeeds.
func TestAmbiguousWithoutTracking(t *testing.T) {
	opts := &container.ClientOptions{}
	opts.Retry = testClientOptions().Retry
	s, ht, _ := newHookedStore(t, opts)
	hook, fired := appliedThenTimeout(isWrite)
	ht.set(hook)
	_, err := s.Put(t.Context(), "k", []byte("x"), gateway.IfAbsent())
	ht.set(nil)
	if *fired != 1 {
		t.Fatalf("fault fired %d times", *fired)
	}
	if err != nil {
		t.Fatalf("own retried write without attempt tracking: %v, want success (the write id matches)", err)
	}
}

package gcsstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/backendtest"
	"github.com/ckgate/ckgate/gateway/storetest"
)

func randomReader(seed byte, n int64) io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{seed}), n)
}

// chunkCounter counts the chunk requests of resumable upload sessions
// (requests to the session URL, which carries upload_id).
type chunkCounter struct {
	base http.RoundTripper
	puts atomic.Int32
}

func (c *chunkCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasPrefix(req.URL.Path, "/upload/storage/v1/") && req.URL.Query().Get("upload_id") != "" {
		c.puts.Add(1)
	}
	return c.base.RoundTrip(req)
}

// TestPutStream20MiB: a 20 MiB stream goes up as a resumable upload in
// several chunks, reads back byte for byte, and a second create-only stream
// of the key is refused with ErrExists, keeping the first.
func TestPutStream20MiB(t *testing.T) {
	const size = 20 << 20
	cc := &chunkCounter{base: http.DefaultTransport}
	s := newStoreOn(t, newClient(t, cc), "")
	ctx := t.Context()
	const key = "state/0/0/9.snapshot"

	in := sha256.New()
	v, err := s.PutStream(ctx, key, backendtest.StreamOnly(io.TeeReader(randomReader(1, size), in)), gateway.IfAbsent())
	if err != nil {
		t.Fatalf("put stream: %v", err)
	}
	if n := cc.puts.Load(); n < 2 {
		t.Errorf("%d resumable chunk requests for %d MiB in %d MiB chunks, want several", n, size>>20, DefaultChunkSize>>20)
	}

	_, err = s.PutStream(ctx, key, backendtest.StreamOnly(randomReader(2, size)), gateway.IfAbsent())
	storetest.WantKeyKind(t, "", err, key, gateway.ErrExists)

	rc, a, err := s.GetStream(ctx, key)
	if err != nil {
		t.Fatalf("get stream: %v", err)
	}
	defer rc.Close()
	out := sha256.New()
	n, err := io.Copy(out, rc)
	if err != nil {
		t.Fatalf("read back after %d bytes: %v", n, err)
	}
	if n != size || a.Size != size || a.Version != v {
		t.Errorf("read back %d bytes, attrs {Size:%d Version:%q}; want %d bytes at %q", n, a.Size, a.Version, size, v)
	}
	if !bytes.Equal(in.Sum(nil), out.Sum(nil)) {
		t.Error("the stored object differs from the first stream")
	}
}

// TestPutLargeBytes: a Put larger than the chunk size goes up in chunks.
func TestPutLargeBytes(t *testing.T) {
	cc := &chunkCounter{base: http.DefaultTransport}
	s := newStoreOn(t, newClient(t, cc), "", WithChunkSize(256<<10))
	data, err := io.ReadAll(randomReader(3, 1<<20+17))
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Put(t.Context(), "big", data, gateway.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	if cc.puts.Load() < 4 {
		t.Errorf("%d chunk requests, want at least 4", cc.puts.Load())
	}
	got, gv, err := s.Get(t.Context(), "big")
	if err != nil || gv != v || !bytes.Equal(got, data) {
		t.Errorf("get = %d bytes at %q, %v; want %d bytes at %q", len(got), gv, err, len(data), v)
	}
	_, err = s.Put(t.Context(), "big", data, gateway.IfAbsent())
	storetest.WantKeyKind(t, "", err, "big", gateway.ErrExists)
}

// TestResumableRace: create-only resumable uploads racing for one key:
// exactly one wins, the others get ErrExists.
func TestResumableRace(t *testing.T) {
	cc := &chunkCounter{base: http.DefaultTransport}
	s := newStoreOn(t, newClient(t, cc), "", WithChunkSize(256<<10))
	const racers, size = 4, 600 << 10
	errs := make([]error, racers)
	vers := make([]gateway.Version, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			<-start
			vers[i], errs[i] = s.PutStream(t.Context(), "commits/1", backendtest.StreamOnly(randomReader(byte(10+i), size)), gateway.IfAbsent())
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatalf("racers %d and %d both won", winner, i)
			}
			winner = i
			continue
		}
		storetest.WantKeyKind(t, "", err, "commits/1", gateway.ErrExists)
	}
	if winner < 0 {
		t.Fatal("no racer won")
	}
	if n := cc.puts.Load(); n < racers {
		t.Errorf("%d chunk requests: the racers did not use resumable uploads", n)
	}
	want, _ := io.ReadAll(randomReader(byte(10+winner), size))
	got, v, err := s.Get(t.Context(), "commits/1")
	if err != nil || v != vers[winner] || !bytes.Equal(got, want) {
		t.Errorf("stored object is not the winner's: %d bytes at %q, %v", len(got), v, err)
	}
}

// TestPutStreamCancelled: cancelling the context in the middle of a
// resumable upload aborts it, reports context.Canceled, and leaves no
// object.
func TestPutStreamCancelled(t *testing.T) {
	cc := &chunkCounter{base: http.DefaultTransport}
	s := newStoreOn(t, newClient(t, cc), "", WithChunkSize(256<<10))
	for _, c := range []gateway.Cond{gateway.IfAbsent(), gateway.None()} {
		t.Run(c.String(), func(t *testing.T) {
			cc.puts.Store(0)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			src := backendtest.CancelAfter(rand.NewChaCha8([32]byte{7}), 1<<20, cancel)
			_, err := s.PutStream(ctx, "partial", backendtest.StreamOnly(src), c)
			storetest.WantKeyKind(t, "", err, "partial", gateway.ErrUnavailable)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error %q does not name the cancellation", err)
			}
			if cc.puts.Load() == 0 {
				t.Error("no chunk was uploaded before the cancellation: the test proves nothing")
			}
			_, err = s.Stat(t.Context(), "partial")
			storetest.WantKeyKind(t, "", err, "partial", gateway.ErrNotFound)
		})
	}
}

// TestPutStreamSourceFails: a source that fails midway aborts the upload:
// the source's error is reported and no object is created, whether the
// failure comes within the first chunk or after several.
func TestPutStreamSourceFails(t *testing.T) {
	s := newStoreOn(t, newClient(t, nil), "", WithChunkSize(256<<10))
	boom := errors.New("disk read error")
	for _, n := range []int64{100, 1 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			_, err := s.PutStream(t.Context(), "partial", backendtest.FailAfter(randomReader(5, 1<<30), n, boom), gateway.IfAbsent())
			storetest.WantKeyKind(t, "", err, "partial", gateway.ErrUnavailable)
			if !errors.Is(err, boom) {
				t.Errorf("error %q does not carry the source's error", err)
			}
			_, err = s.Stat(t.Context(), "partial")
			storetest.WantKeyKind(t, "", err, "partial", gateway.ErrNotFound)
		})
	}
}

package azstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/backendtest"
	"github.com/ckgate/ckgate/gateway/storetest"
)

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// TestPutStream20MiB: a 20 MiB stream is staged as three blocks of the
// default size and committed create-only; a second create-only stream of
// the key is refused and leaves the first intact.
func TestPutStream20MiB(t *testing.T) {
	s := newStore(t, "")
	ctx := t.Context()
	data := randomBytes(20<<20, 1)
	v, err := s.PutStream(ctx, "state/0/0/1.snapshot", backendtest.StreamOnly(bytes.NewReader(data)), gateway.IfAbsent())
	if err != nil {
		t.Fatalf("put stream: %v", err)
	}
	bl, err := s.d.blob("state/0/0/1.snapshot").GetBlockList(ctx, blockblob.BlockListTypeAll, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(bl.CommittedBlocks); n != 3 {
		t.Errorf("%d committed blocks, want 3 of %d bytes", n, BlockSize)
	}
	other := randomBytes(20<<20, 2)
	_, err = s.PutStream(ctx, "state/0/0/1.snapshot", backendtest.StreamOnly(bytes.NewReader(other)), gateway.IfAbsent())
	storetest.WantKeyKind(t, "", err, "state/0/0/1.snapshot", gateway.ErrExists)

	rc, a, err := s.GetStream(ctx, "state/0/0/1.snapshot")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, rc)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(data)) || a.Size != n || a.Version != v || !bytes.Equal(h.Sum(nil), sha(data)) {
		t.Errorf("read %d bytes (attrs %+v), want %d at %q with the first stream's content", n, a, len(data), v)
	}
}

func sha(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

// TestPutStreamSizes: streams around the block size round-trip.
func TestPutStreamSizes(t *testing.T) {
	s := newStore(t, "")
	s.d.blockSize = 1 << 10
	for _, n := range []int{0, 1, 1023, 1024, 1025, 2048, 5000} {
		key := fmt.Sprintf("sizes/%d", n)
		data := randomBytes(n, uint64(n))
		v, err := s.PutStream(t.Context(), key, backendtest.StreamOnly(bytes.NewReader(data)), gateway.IfAbsent())
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, gv, err := s.Get(t.Context(), key)
		if err != nil || gv != v || !bytes.Equal(got, data) {
			t.Errorf("%d bytes: got %d bytes at %q (%v), want version %q", n, len(got), gv, err, v)
		}
	}
}

// TestPutStreamCancelled: a stream cancelled after some blocks were staged
// fails with ErrUnavailable and leaves no blob.
func TestPutStreamCancelled(t *testing.T) {
	s := newStore(t, "")
	s.d.blockSize = 4 << 10
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r := backendtest.CancelAfter(bytes.NewReader(randomBytes(64<<10, 3)), int64(3*s.d.blockSize), cancel)
	_, err := s.PutStream(ctx, "commits/3", r, gateway.IfAbsent())
	storetest.WantKeyKind(t, "", err, "commits/3", gateway.ErrUnavailable)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v does not wrap context.Canceled", err)
	}
	_, err = s.Stat(t.Context(), "commits/3")
	storetest.WantKeyKind(t, "", err, "commits/3", gateway.ErrNotFound)
	for a, err := range s.List(t.Context(), "") {
		t.Errorf("listed %q (%v) after a cancelled stream", a.Key, err)
	}
	// The key is still free.
	if _, err := s.PutStream(t.Context(), "commits/3", bytes.NewReader([]byte("ok")), gateway.IfAbsent()); err != nil {
		t.Errorf("create after a cancelled stream: %v", err)
	}
}

var errReader = errors.New("reader broke")

// TestPutStreamReaderFails: a reader error after staging leaves no blob.
func TestPutStreamReaderFails(t *testing.T) {
	s := newStore(t, "")
	s.d.blockSize = 1 << 10
	_, err := s.PutStream(t.Context(), "k", backendtest.FailAfter(bytes.NewReader(randomBytes(64<<10, 4)), 2500, errReader), gateway.None())
	if !errors.Is(err, errReader) {
		t.Fatalf("error %v does not wrap the reader's", err)
	}
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrUnavailable)
	_, err = s.Stat(t.Context(), "k")
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrNotFound)
}

// TestPutStreamRace: concurrent multi-block streams of one key never mix
// their blocks. Create-only: exactly one wins and the blob is its bytes.
// Unconditional: the blob is exactly one writer's bytes.
func TestPutStreamRace(t *testing.T) {
	for _, c := range []gateway.Cond{gateway.IfAbsent(), gateway.None()} {
		t.Run(c.String(), func(t *testing.T) {
			s := newStore(t, "")
			s.d.blockSize = 16 << 10
			const writers = 8
			datas := make([][]byte, writers)
			for i := range datas {
				datas[i] = randomBytes(80<<10, uint64(100+i))
			}
			var wg sync.WaitGroup
			errs := make([]error, writers)
			versions := make([]gateway.Version, writers)
			for i := range writers {
				wg.Go(func() {
					versions[i], errs[i] = s.PutStream(t.Context(), "race", backendtest.StreamOnly(bytes.NewReader(datas[i])), c)
				})
			}
			wg.Wait()
			got, v, err := s.Get(t.Context(), "race")
			if err != nil {
				t.Fatal(err)
			}
			winners := 0
			for i, err := range errs {
				switch {
				case err == nil:
					winners++
					if c.Kind == gateway.CondIfAbsent && (!bytes.Equal(got, datas[i]) || v != versions[i]) {
						t.Errorf("winner %d: stored bytes or version are not its own", i)
					}
				case c.Kind == gateway.CondIfAbsent && errors.Is(err, gateway.ErrExists):
				case c.Kind == gateway.CondNone && errors.Is(err, gateway.ErrUnavailable):
					// a concurrent commit discarded this writer's blocks
				default:
					t.Errorf("writer %d: %v", i, err)
				}
			}
			if c.Kind == gateway.CondIfAbsent && winners != 1 {
				t.Errorf("%d winners, want 1", winners)
			}
			if winners == 0 {
				t.Errorf("no writer succeeded")
			}
			found := false
			for _, d := range datas {
				found = found || bytes.Equal(got, d)
			}
			if !found {
				t.Errorf("stored %d bytes are no single writer's stream", len(got))
			}
		})
	}
}

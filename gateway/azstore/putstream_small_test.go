package azstore

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// TestPutStreamSmallAllocatesItsSize: a 4 KiB PutStream (most checkpoint
// files, and every small PutObject through ckgate serve) allocates about
// what it sends, not a whole block (8 MiB).
func TestPutStreamSmallAllocatesItsSize(t *testing.T) {
	s := newStore(t, "")
	body := bytes.Repeat([]byte("x"), 4096)
	put := func() {
		if _, err := s.PutStream(t.Context(), "small", struct{ io.Reader }{bytes.NewReader(body)}, gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
	put() // the client's first request sets up its connection
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	put()
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 2<<20 {
		t.Fatalf("a 4 KiB PutStream allocated %d bytes (block size %d)", got, BlockSize)
	}
	data, _, err := s.Get(t.Context(), "small")
	if err != nil || !bytes.Equal(data, body) {
		t.Fatalf("read back %d bytes, %v", len(data), err)
	}
}

package backendtest

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// WantSmallPutStreamAllocatesItsSize fails t unless a 4 KiB PutStream to s
// (most checkpoint files, and every small PutObject through ckgate serve)
// allocates about what it sends, not a whole part or block of partSize
// bytes (8 MiB cost ~4 ms per request), and stores the bytes it was given.
func WantSmallPutStreamAllocatesItsSize(t *testing.T, s gateway.Store, partSize int64) {
	t.Helper()
	body := bytes.Repeat([]byte("x"), 4096)
	put := func() {
		t.Helper()
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
		t.Fatalf("a 4 KiB PutStream allocated %d bytes (part size %d)", got, partSize)
	}
	data, _, err := s.Get(t.Context(), "small")
	if err != nil || !bytes.Equal(data, body) {
		t.Fatalf("read back %d bytes, %v", len(data), err)
	}
}

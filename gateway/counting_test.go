package gateway_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ckgate/ckgate/gateway"
)

// The count and the digest are of the bytes read, also when the reader
// hands them out one at a time or fails part-way.
func TestCountingReader(t *testing.T) {
	const text = "offsets/0 and commits/0"
	want := sha256.Sum256([]byte(text))
	c := &gateway.CountingReader{R: iotest.OneByteReader(strings.NewReader(text)), Hash: sha256.New()}
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatal(err)
	}
	if c.N != int64(len(text)) || hex.EncodeToString(c.Hash.Sum(nil)) != hex.EncodeToString(want[:]) {
		t.Fatalf("counted %d bytes, digest %x; want %d, %x", c.N, c.Hash.Sum(nil), len(text), want)
	}

	boom := errors.New("disk gone")
	c = &gateway.CountingReader{R: io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom))}
	if _, err := io.Copy(io.Discard, c); !errors.Is(err, boom) || c.N != 3 {
		t.Fatalf("after a failing read: %d bytes, %v; want 3 and %v", c.N, err, boom)
	}
}

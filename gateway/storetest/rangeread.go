package storetest

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// testGetRange: a ranged read yields exactly the bytes of the range, with
// the whole object's attributes; a range at or past the end yields
// nothing; an absent key is ErrNotFound.
func testGetRange(t *testing.T, s gateway.Store) {
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	v := mustPut(t, s, "state/0/1/2.delta", data, gateway.None())
	mustPut(t, s, "empty", nil, gateway.None())
	size := int64(len(data))
	for _, r := range []struct{ off, n int64 }{
		{0, 10}, {0, -1}, {1000, 500}, {1000, -1}, {size - 1, -1}, {size - 1, 1},
		{size - 10, 100}, {size, -1}, {size, 5}, {size + 100, 1}, {5, 0}, {0, size}, {0, size + 1},
	} {
		t.Run(fmt.Sprintf("off=%d,n=%d", r.off, r.n), func(t *testing.T) {
			want := data[min(r.off, size):]
			if r.n >= 0 && int64(len(want)) > r.n {
				want = want[:r.n]
			}
			got, a := readRange(t, s, "state/0/1/2.delta", r.off, r.n)
			if !bytes.Equal(got, want) {
				t.Errorf("range read %d bytes (%x...), want %d", len(got), trunc(got), len(want))
			}
			if a.Size != size || a.Version != v || a.Key != "state/0/1/2.delta" {
				t.Errorf("attrs {Key:%q Size:%d Version:%q}, want the whole object's {%q %d %q}", a.Key, a.Size, a.Version, "state/0/1/2.delta", size, v)
			}
		})
	}
	for _, r := range [][2]int64{{0, -1}, {0, 10}, {1, 1}} {
		got, a := readRange(t, s, "empty", r[0], r[1])
		if len(got) != 0 || a.Size != 0 {
			t.Errorf("range %v of an empty object: %d bytes, size %d", r, len(got), a.Size)
		}
	}
	_, _, err := gateway.GetRange(t.Context(), s, "absent", 0, 10)
	WantKeyKind(t, "range of an absent key", err, "absent", gateway.ErrNotFound)
	_, _, err = gateway.GetRange(t.Context(), s, "empty", -1, 10)
	WantKeyKind(t, "negative offset", err, "empty", gateway.ErrUnsupported)
	_, _, err = gateway.GetRange(t.Context(), s, "a/../b", 0, 1)
	WantKeyKind(t, "invalid key", err, "a/../b", gateway.ErrInvalidKey)
}

func readRange(t *testing.T, s gateway.Store, key string, off, n int64) ([]byte, gateway.Attrs) {
	t.Helper()
	rc, a, err := gateway.GetRange(t.Context(), s, key, off, n)
	if err != nil {
		t.Fatalf("range %d+%d of %q: %v", off, n, key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading range %d+%d of %q: %v", off, n, key, err)
	}
	return b, a
}

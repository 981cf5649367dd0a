package drivertest

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// Range checks d's GetRange on names under p ("" or ending in '/'): ranges
// at the start, in the middle, to the end, running past it, starting at or
// past it, of zero length, on an empty object and on an absent key. Every
// read carries the whole object's attributes.
func Range(t *testing.T, d gateway.Driver, p string) {
	rd, ok := d.(gateway.RangeDriver)
	if !ok {
		t.Fatalf("%T is no gateway.RangeDriver", d)
	}
	ctx := t.Context()
	data := pattern(1000)
	v := put(t, d, p+"range/r", data)
	ve := put(t, d, p+"range/empty", nil)
	for _, tc := range []struct {
		name   string
		key    string
		off, n int64
		want   []byte
		size   int64
		v      gateway.Version
	}{
		{"start", "range/r", 0, 10, data[:10], 1000, v},
		{"middle", "range/r", 400, 200, data[400:600], 1000, v},
		{"to the end", "range/r", 990, -1, data[990:], 1000, v},
		{"whole", "range/r", 0, -1, data, 1000, v},
		{"past the end", "range/r", 995, 100, data[995:], 1000, v},
		{"last byte", "range/r", 999, 1, data[999:], 1000, v},
		{"at the end", "range/r", 1000, -1, nil, 1000, v},
		{"after the end", "range/r", 5000, 10, nil, 1000, v},
		{"zero length", "range/r", 10, 0, nil, 1000, v},
		{"empty object", "range/empty", 0, -1, nil, 0, ve},
		{"empty object, bounded", "range/empty", 0, 5, nil, 0, ve},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, a, err := rd.GetRange(ctx, p+tc.key, tc.off, tc.n)
			if err != nil {
				t.Fatalf("GetRange(%s, %d, %d): %v", tc.key, tc.off, tc.n, err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatalf("reading GetRange(%s, %d, %d): %v", tc.key, tc.off, tc.n, err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("GetRange(%s, %d, %d) read %d bytes %s, want %d %s", tc.key, tc.off, tc.n, len(got), head(got), len(tc.want), head(tc.want))
			}
			if a.Size != tc.size || a.Version != tc.v {
				t.Errorf("GetRange(%s, %d, %d) attrs size %d version %s, want the object's: %d %s", tc.key, tc.off, tc.n, a.Size, a.Version, tc.size, tc.v)
			}
		})
	}
	t.Run("absent", func(t *testing.T) {
		rc, _, err := rd.GetRange(ctx, p+"range/absent", 0, 10)
		if err == nil {
			rc.Close()
		}
		wantKind(t, d, "GetRange of an absent key", err, gateway.None(), gateway.ErrNotFound)
	})
}

func head(b []byte) string {
	if len(b) > 8 {
		return fmt.Sprintf("%x…", b[:8])
	}
	return fmt.Sprintf("%x", b)
}

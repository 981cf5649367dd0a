package gateway

import (
	"strconv"
	"testing"
)

func TestContentRangeSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"bytes 0-9/100", 100, true},
		{"bytes 990-999/1000", 1000, true},
		{"bytes */1000", 1000, true}, // a 416's
		{"bytes 0-0/0", 0, true},
		{"bytes 0-9/*", 0, false},
		{"bytes 0-9/-1", 0, false},
		{"bytes 0-9/+5", 0, false},
		{"bytes 0-9/99999999999999999999", 0, false},
		{"bytes 0-9", 0, false},
		{"items 0-9/100", 0, false},
		{"", 0, false},
	} {
		n, ok := ContentRangeSize(tc.in)
		if n != tc.want || ok != tc.ok {
			t.Errorf("ContentRangeSize(%q) = %d, %v; want %d, %v", tc.in, n, ok, tc.want, tc.ok)
		}
	}
}

// FuzzContentRangeSize: any header value gives a size that is the
// decimal number after the last '/', or false; never a panic.
func FuzzContentRangeSize(f *testing.F) {
	for _, s := range []string{"bytes 0-9/100", "bytes */0", "bytes 1-2/*", "bytes /", "bytes 0-9/-0", "bytes 0-1/1/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n, ok := ContentRangeSize(v)
		if !ok {
			if n != 0 {
				t.Fatalf("ContentRangeSize(%q) = %d with false", v, n)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ContentRangeSize(%q) = %d, negative", v, n)
		}
		if got := strconv.FormatInt(n, 10); len(v) < len(got) || v[len(v)-len(got):] != got && v[len(v)-len(got):] != "" {
			t.Fatalf("ContentRangeSize(%q) = %d, not the value's tail", v, n)
		}
	})
}

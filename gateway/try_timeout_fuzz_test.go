package gateway

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// FuzzTakeTryTimeout: whatever the URL, TakeTryTimeout never panics; a
// timeout it returns is within bounds and gone from the query, and an
// error is ErrInvalidURL naming the parameter.
func FuzzTakeTryTimeout(f *testing.F) {
	for _, s := range []string{
		"s3://b/p?try_timeout=3s", "gs://b?try_timeout=1m&project=x", "az://a/c?try_timeout=100ms",
		"s3://b?try_timeout=", "s3://b?try_timeout=1s&try_timeout=2s", "file:///tmp/x?try_timeout=1s",
		"s3://b?try_timeout=9999999999h", "s3://b?try%5Ftimeout=1s", "s3://b?%zz", "s3://b?try_timeout=-5s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := ParseURL(raw)
		if err != nil {
			return
		}
		out, d, err := TakeTryTimeout(u)
		if err != nil {
			if !errors.Is(err, ErrInvalidURL) || !strings.Contains(err.Error(), TryTimeoutParam) {
				t.Fatalf("TakeTryTimeout(%q) = %v: want ErrInvalidURL naming %s", raw, err, TryTimeoutParam)
			}
			return
		}
		if d != 0 && (d < MinTryTimeout || d > MaxTryTimeout) {
			t.Fatalf("TakeTryTimeout(%q) = %s, out of bounds", raw, d)
		}
		if d != 0 {
			if q, err := url.ParseQuery(out.RawQuery); err != nil || q.Has(TryTimeoutParam) {
				t.Fatalf("TakeTryTimeout(%q) left query %q", raw, out.RawQuery)
			}
		}
	})
}

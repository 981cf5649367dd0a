package gateway_test

import (
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// FuzzCanonicalRoot: canonicalisation never panics, is idempotent, and
// yields one spelling: no empty, "." or ".." segment, no trailing '/' (but
// "file:///"), no query, user info or fragment. A key joined under it
// locates below it.
func FuzzCanonicalRoot(f *testing.F) {
	for _, s := range []string{"/", "//", "/.", "/tmp/..", "file:///", "file:////", "file:/tmp", ".", "s3://b/a", "s3://b//a/",
		"S3://B/a?endpoint=http://u:p@h", "gs://b/a%2Fb", "az://acct/c/p", "azure://acct/C", "file://localhost/tmp", "s3://b/a/../c",
		"file:///tmp/c%6B", "s3://b/a#frag", "s3://u:p@b/a"} {
		f.Add(s, "offsets/2")
	}
	f.Fuzz(func(t *testing.T, raw, key string) {
		loc, err := gateway.CanonicalRoot(raw)
		if err != nil {
			return
		}
		again, err := gateway.CanonicalRoot(loc)
		if err != nil || again != loc {
			t.Fatalf("CanonicalRoot(%q) = %q, but CanonicalRoot(%q) = %q, %v", raw, loc, loc, again, err)
		}
		scheme, rest, ok := strings.Cut(loc, "://")
		if !ok || strings.ContainsAny(loc, "?#") || strings.Contains(rest, "@") && scheme != "file" {
			t.Fatalf("CanonicalRoot(%q) = %q: not a bare location", raw, loc)
		}
		if loc != "file:///" && strings.HasSuffix(loc, "/") {
			t.Fatalf("CanonicalRoot(%q) = %q ends with '/'", raw, loc)
		}
		for _, seg := range strings.Split(strings.TrimPrefix(rest, "/"), "/") {
			if seg == "." || seg == ".." || (seg == "" && loc != "file:///") {
				t.Fatalf("CanonicalRoot(%q) = %q has segment %q", raw, loc, seg)
			}
		}
		if scheme == "file" {
			return // keys of the local disk are located on the file system
		}
		k, err := gateway.CanonicalKey(loc, key)
		if err != nil {
			return
		}
		if !gateway.InsideLocation(k, loc) {
			t.Fatalf("CanonicalKey(%q, %q) = %q is not below it", loc, key, k)
		}
	})
}

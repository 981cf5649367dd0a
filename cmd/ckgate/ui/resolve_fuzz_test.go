package ui

import (
	"errors"
	"strings"
	"testing"
)

// FuzzResolve: whatever location a request names, Resolve either refuses
// it (ErrOutside) or returns the served root and a key prefix that is a
// valid key inside it; it never panics.
func FuzzResolve(f *testing.F) {
	dir := f.TempDir()
	st := fileRoot(f, dir)
	l := &Loader{Roots: []Root{st}}
	for _, s := range []string{dir, dir + "/a/b", "file://" + dir + "/x", dir + "/../etc", "s3://b/k", "", "file:////", dir + "/%2e%2e/x", dir + "//a//b/", "./a", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r, rel, err := l.Resolve(raw)
		if err != nil {
			if !errors.Is(err, ErrOutside) {
				t.Fatalf("%q: %v is not ErrOutside", raw, err)
			}
			return
		}
		if r.canon != st.canon || strings.HasPrefix(rel, "/") || strings.Contains("/"+rel+"/", "/../") || strings.Contains(rel, "//") {
			t.Fatalf("%q: root %s rel %q", raw, r.canon, rel)
		}
	})
}

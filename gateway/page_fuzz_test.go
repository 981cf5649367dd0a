package gateway_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// refPage is the page by definition: every key's entry (its common prefix
// or itself), deduplicated, those after after, the first max.
func refPage(keys []string, prefix, delim, after string, max int) (names []string, truncated bool) {
	var all []string
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		e := k
		if delim != "" {
			if i := strings.Index(k[len(prefix):], delim); i >= 0 {
				e = k[:len(prefix)+i+len(delim)]
			}
		}
		if e > after && (len(all) == 0 || all[len(all)-1] != e) {
			all = append(all, e)
		}
	}
	if len(all) > max {
		return all[:max], true
	}
	return all, false
}

// FuzzPageBuilder: the page built from keys in order, passing over what
// Skips and SkipsDir say cannot be in it (as filestore's walk does), is
// the page by definition, and its Next continues it.
func FuzzPageBuilder(f *testing.F) {
	f.Add("a-b a.b a/1 a/2 a/b/x a/b/y a/c a0 b/1 b0/x c", "", "/", "a/b/x", 3)
	f.Add("offsets/0 offsets/1 offsets/10 offsets/2 state/0/0/1.delta", "offsets/", "/", "offsets/1", 1)
	f.Add("x/y/z x/y/zz x/yy x-", "x", "/", "", 2)
	f.Add("a/b a/b/c a/bc", "a/", "b", "a/b", 5)
	f.Fuzz(func(t *testing.T, list, prefix, delim, after string, max int) {
		if max <= 0 || max > 50 {
			return
		}
		keys := slices.Sorted(slices.Values(strings.Fields(list)))
		keys = slices.Compact(keys)
		wantNames, wantTrunc := refPage(keys, prefix, delim, after, max)

		pb := gateway.NewPageBuilder(prefix, delim, after, max)
		skippedDir := ""
		for _, k := range keys {
			if !strings.HasPrefix(k, prefix) {
				continue
			}
			// A walk asks about each directory of k it enters.
			if skippedDir != "" && strings.HasPrefix(k, skippedDir) {
				continue
			}
			skippedDir = ""
			for i := len(prefix); i < len(k); i++ {
				if k[i] == '/' && pb.SkipsDir(k[:i+1]) {
					skippedDir = k[:i+1]
					break
				}
			}
			if skippedDir != "" || pb.Skips(k) {
				continue
			}
			if !pb.Add(gateway.Attrs{Key: k}) {
				break
			}
		}
		pg := pb.Page()
		got := append(slices.Clone(pg.Prefixes), func() []string {
			var o []string
			for _, a := range pg.Objects {
				o = append(o, a.Key)
			}
			return o
		}()...)
		slices.Sort(got)
		if !slices.Equal(got, wantNames) || pg.Truncated != wantTrunc {
			t.Fatalf("keys %q prefix %q delim %q after %q max %d: page %q truncated %v, want %q %v", keys, prefix, delim, after, max, got, pg.Truncated, wantNames, wantTrunc)
		}
		if pg.Truncated {
			if pg.Next != wantNames[len(wantNames)-1] {
				t.Fatalf("next %q, want the page's last entry %q", pg.Next, wantNames[len(wantNames)-1])
			}
			rest, _ := refPage(keys, prefix, delim, pg.Next, len(keys)+1)
			all, _ := refPage(keys, prefix, delim, after, len(keys)+1)
			if !slices.Equal(append(slices.Clone(wantNames), rest...), all) {
				t.Fatalf("continuing after %q loses or repeats entries", pg.Next)
			}
		}
	})
}

// FuzzDirMarker: a directory's marker key is a valid key that maps back
// to the directory, and no other valid key maps to a directory.
func FuzzDirMarker(f *testing.F) {
	for _, s := range []string{"offsets", "offsets/", "state/0/1", "a/.dir.ckgate", ".dir.ckgate", "", "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dir string) {
		k := gateway.DirMarkerKey(dir)
		if gateway.ValidatePrefix(dir) == nil && strings.Trim(dir, "/") != "" && gateway.ValidateKey("put", strings.TrimSuffix(dir, "/")) == nil {
			if err := gateway.ValidateKey("put", k); err != nil && len(k) <= gateway.MaxKeyLen {
				t.Fatalf("marker of %q is %q, not a valid key: %v", dir, k, err)
			}
			if back, ok := gateway.DirMarker(k); !ok || back != strings.TrimSuffix(dir, "/")+"/" {
				t.Fatalf("DirMarker(%q) = %q, %v; want %q", k, back, ok, dir)
			}
		}
		if d, ok := gateway.DirMarker(dir); ok && gateway.DirMarkerKey(d) != dir {
			t.Fatalf("DirMarker(%q) = %q, whose marker is %q", dir, d, gateway.DirMarkerKey(d))
		}
	})
}

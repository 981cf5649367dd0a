package drivertest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// pageKeys are the keys Page lists: names that sort just before and after
// a directory ("a-b", "a.x", "a/…", "a0"; no key is also a directory, which
// versitygw's file tree cannot hold), nested directories, a directory of a
// dozen log entries, a name with a character above U+FFFF.
var pageKeys = func() []string {
	k := []string{"a-b", "a.x", "a/b", "a/c", "a/d/e", "a/d/f", "a0", "b/x", "b/y", "c", "d/\U0001F600", "d/\uFF21"}
	for i := range 12 {
		k = append(k, fmt.Sprintf("offsets/%d", i))
	}
	return k
}()

// Page checks d's ListPage on names under p ("" or ending in '/'): pages
// with and without a delimiter, after a key inside a common prefix, after
// a common prefix, paging with max=1 that yields the full listing, each
// page against a reference built from the keys. requests, when not nil,
// counts the requests d has sent to its service: a page whose entries the
// service holds in one answer must cost exactly one. utf16 says the
// service lists in UTF-16 order (Azure): a page that ends on a name with a
// character at or above U+D800 may then cost one request more, to rule
// out a name the two orders place differently.
func Page(t *testing.T, d gateway.Driver, p string, requests func() int64, utf16 bool) {
	pd, ok := d.(gateway.PageDriver)
	if !ok {
		t.Fatalf("%T is no gateway.PageDriver", d)
	}
	ctx := t.Context()
	var names []string
	var wg sync.WaitGroup
	for _, k := range pageKeys {
		names = append(names, p+k)
		wg.Go(func() { put(t, d, p+k, []byte(k)) })
	}
	wg.Wait()
	slices.Sort(names)

	list := func(t *testing.T, prefix, delim, after string, max int) gateway.Page {
		t.Helper()
		var before int64
		if requests != nil {
			before = requests()
		}
		pg, err := pd.ListPage(ctx, prefix, delim, after, max)
		if err != nil {
			t.Fatalf("ListPage(%q, %q, after %q, %d): %v", prefix, delim, after, max, err)
		}
		for _, a := range pg.Objects {
			if a.Size != int64(len(a.Key)-len(p)) || a.Version == "" {
				t.Errorf("ListPage(%q, %q, after %q, %d) listed %s with size %d version %q, want %d and a version", prefix, delim, after, max, a.Key, a.Size, a.Version, len(a.Key)-len(p))
			}
		}
		if requests != nil {
			want := int64(1)
			if end := pageEnd(pg); utf16 && strings.ContainsFunc(end, func(r rune) bool { return r >= 0xD800 }) {
				want++
			}
			least := int64(1)
			if after > prefix && !strings.HasPrefix(after, prefix) {
				least = 0 // past every name under prefix: nothing to ask
			}
			if n := requests() - before; n < least || n > want {
				t.Errorf("ListPage(%q, %q, after %q, %d) sent %d requests, want %d to %d", prefix, delim, after, max, n, least, want)
			}
		}
		return pg
	}
	for _, tc := range []struct{ prefix, delim, after string }{
		{"", "/", ""},
		{"", "", ""},
		{"a/", "/", ""},
		{"a", "/", ""},
		{"offsets/", "", ""},
		{"offsets/1", "", ""},
		{"", "/", "a/b"},      // after a key inside a common prefix: a/ still holds a/c
		{"", "/", "a/d/f"},    // the last key of a/: a/ is done
		{"", "/", "a/"},       // after a common prefix: its keys were on that page
		{"a/", "/", "a/c"},    // inside a prefix, after a key
		{"a/", "/", "a/d/"},   // inside a prefix, after its common prefix
		{"", "", "offsets/5"}, // flat, from the middle
		{"d/", "", ""},
		{"", "/", "zzz"},
		{"nothing/", "/", ""},
		{"a/", "/", "b"}, // past every name under the prefix
	} {
		prefix, after := p+tc.prefix, tc.after
		if after != "" {
			after = p + after
		}
		t.Run(fmt.Sprintf("prefix=%q,delim=%q,after=%q", tc.prefix, tc.delim, tc.after), func(t *testing.T) {
			want := reference(names, prefix, tc.delim, after, 1000)
			if got := list(t, prefix, tc.delim, after, 1000); !samePage(got, want) {
				t.Errorf("got  %s\nwant %s", show(got), show(want))
			}
			// Page by page with max=1, then 2: the same entries in order.
			for _, max := range []int{1, 2} {
				var all gateway.Page
				next := after
				for i := 0; ; i++ {
					if i > len(names)+1 {
						t.Fatalf("max=%d: more pages than keys", max)
					}
					pg := list(t, prefix, tc.delim, next, max)
					if n := len(pg.Objects) + len(pg.Prefixes); n > max {
						t.Fatalf("max=%d: a page of %d entries", max, n)
					}
					if w := reference(names, prefix, tc.delim, next, max); !samePage(pg, w) {
						t.Fatalf("max=%d, after %q: got %s\nwant %s", max, next, show(pg), show(w))
					}
					all.Objects = append(all.Objects, pg.Objects...)
					all.Prefixes = append(all.Prefixes, pg.Prefixes...)
					if !pg.Truncated {
						break
					}
					next = pg.Next
				}
				if !samePage(all, want) {
					t.Errorf("max=%d pages joined: %s\nwant %s", max, show(all), show(want))
				}
			}
		})
	}
}

// pageEnd is the page's last name.
func pageEnd(pg gateway.Page) string {
	var end string
	for _, a := range pg.Objects {
		end = max(end, a.Key)
	}
	for _, cp := range pg.Prefixes {
		end = max(end, cp)
	}
	return end
}

// reference is the page the contract describes, built from every name:
// the entries (a key, or the common prefix it is grouped under) that sort
// after after, in byte order, at most max.
func reference(names []string, prefix, delim, after string, max int) gateway.Page {
	type entry struct {
		name string
		cp   bool
	}
	seen := map[string]bool{}
	var all []entry
	for _, n := range names {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		e := entry{name: n}
		if i := strings.Index(n[len(prefix):], delim); delim != "" && i >= 0 {
			e = entry{name: n[:len(prefix)+i+len(delim)], cp: true}
		}
		if e.name > after && !seen[e.name] {
			seen[e.name] = true
			all = append(all, e)
		}
	}
	slices.SortFunc(all, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var pg gateway.Page
	if len(all) > max {
		all = all[:max]
		pg.Truncated, pg.Next = true, all[max-1].name
	}
	for _, e := range all {
		if e.cp {
			pg.Prefixes = append(pg.Prefixes, e.name)
		} else {
			pg.Objects = append(pg.Objects, gateway.Attrs{Key: e.name})
		}
	}
	return pg
}

func keys(pg gateway.Page) []string {
	var k []string
	for _, a := range pg.Objects {
		k = append(k, a.Key)
	}
	return k
}

// samePage compares names, prefixes and truncation (not sizes or versions).
func samePage(a, b gateway.Page) bool {
	return slices.Equal(keys(a), keys(b)) && slices.Equal(a.Prefixes, b.Prefixes) &&
		a.Truncated == b.Truncated && a.Next == b.Next
}

func show(pg gateway.Page) string {
	return fmt.Sprintf("objects %q prefixes %q truncated %v next %q", keys(pg), pg.Prefixes, pg.Truncated, pg.Next)
}

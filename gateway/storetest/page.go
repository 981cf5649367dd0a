package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// pageKeys mix objects and common prefixes whose byte order interleaves
// ("a-b" < "a.b" < "a/" < "a0"), and keys inside deeper prefixes.
var pageKeys = []string{
	"a-b", "a.b", "a/1", "a/2", "a/b/x", "a/b/y", "a/c", "a0", "b/1", "b0/x", "c",
	"offsets/0", "offsets/1", "offsets/10", "offsets/2", "state/0/0/1.delta", "state/0/1/1.delta",
}

// wantPage computes a page from a full key list: the reference the store's
// page is compared with.
func wantPage(all []string, prefix, delim, after string, max int) (objs, prefixes []string, truncated bool, next string) {
	last := ""
	n := 0
	for _, k := range all {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		e, isP := k, false
		if delim != "" {
			if i := strings.Index(k[len(prefix):], delim); i >= 0 {
				e, isP = k[:len(prefix)+i+len(delim)], true
			}
		}
		if e <= after || isP && e == last {
			continue
		}
		if n == max {
			return objs, prefixes, true, last
		}
		n++
		last = e
		if isP {
			prefixes = append(prefixes, e)
		} else {
			objs = append(objs, e)
		}
	}
	return objs, prefixes, false, ""
}

// testListPage: one page holds exactly the entries after after, objects
// and common prefixes grouped by the delimiter, in byte order, at most max
// of them, with Next continuing where it stopped.
func testListPage(t *testing.T, s gateway.Store) {
	versions := putMany(t, s, pageKeys)
	all := slices.Sorted(slices.Values(pageKeys))
	for _, tc := range []struct {
		prefix, delim, after string
		max                  int
	}{
		{"", "/", "", 100}, {"", "/", "", 3}, {"", "/", "a.b", 2}, {"", "/", "a/", 2},
		{"", "/", "a/b/x", 2}, // after inside a common prefix: the prefix is not repeated
		{"a/", "/", "", 100}, {"a/", "/", "a/1", 1}, {"a/", "/", "a/b/", 5}, {"a/", "/", "a/b/x", 5},
		{"a", "/", "", 100}, {"", "", "", 100}, {"", "", "a/b/x", 3}, {"offsets/", "/", "offsets/1", 2},
		{"state/", "/", "", 10}, {"state/0/", "/", "", 10}, {"nope/", "/", "", 10}, {"", "/", "zzz", 10},
	} {
		t.Run(fmt.Sprintf("prefix=%q,delim=%q,after=%q,max=%d", tc.prefix, tc.delim, tc.after, tc.max), func(t *testing.T) {
			pg, err := gateway.ListPage(t.Context(), s, tc.prefix, tc.delim, tc.after, tc.max)
			if err != nil {
				t.Fatal(err)
			}
			objs, prefixes, trunc, next := wantPage(all, tc.prefix, tc.delim, tc.after, tc.max)
			wantKeys(t, "objects", keysOf(pg.Objects), objs)
			wantKeys(t, "prefixes", pg.Prefixes, prefixes)
			if pg.Truncated != trunc || pg.Next != next {
				t.Errorf("truncated %v next %q, want %v %q", pg.Truncated, pg.Next, trunc, next)
			}
			for _, a := range pg.Objects {
				if a.Size != int64(len(a.Key)) || a.Version != versions[a.Key] {
					t.Errorf("%q: size %d version %q, want %d %q", a.Key, a.Size, a.Version, len(a.Key), versions[a.Key])
				}
			}
		})
	}
	// Paging one entry at a time sees exactly the full listing.
	for _, delim := range []string{"", "/"} {
		var got []string
		after := ""
		for pages := 0; ; pages++ {
			if pages > len(all) {
				t.Fatalf("delim %q: more pages than keys", delim)
			}
			pg, err := gateway.ListPage(t.Context(), s, "", delim, after, 1)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(pg.Objects) + len(pg.Prefixes); n > 1 {
				t.Fatalf("delim %q: a page of max 1 holds %d entries", delim, n)
			}
			got = append(got, keysOf(pg.Objects)...)
			got = append(got, pg.Prefixes...)
			if !pg.Truncated {
				break
			}
			after = pg.Next
		}
		objs, prefixes, _, _ := wantPage(all, "", delim, "", len(all)+1)
		want := slices.Sorted(slices.Values(append(objs, prefixes...)))
		wantKeys(t, fmt.Sprintf("paged one by one, delim %q", delim), got, want)
	}
	if delim := keysOf(listAll(t, s, "")); !slices.Equal(delim, all) {
		t.Errorf("list after paging = %q", delim)
	}
	for _, bad := range []struct {
		prefix string
		max    int
		kind   error
	}{{"a//", 10, gateway.ErrInvalidKey}, {"/abs", 10, gateway.ErrInvalidKey}, {"a/", 0, gateway.ErrUnsupported}} {
		_, err := gateway.ListPage(t.Context(), s, bad.prefix, "/", "", bad.max)
		WantKeyKind(t, "list page", err, bad.prefix, bad.kind)
	}
}

// testListPageMany: paging past 1,000 keys, 250 at a time, equals List.
func testListPageMany(t *testing.T, s gateway.Store) {
	var all []string
	for i := range ManyKeys {
		all = append(all, fmt.Sprintf("many/%04d", i))
	}
	putMany(t, s, all)
	var got []string
	after, pages := "", 0
	for {
		pg, err := gateway.ListPage(t.Context(), s, "many/", "/", after, 250)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		got = append(got, keysOf(pg.Objects)...)
		if !pg.Truncated {
			break
		}
		after = pg.Next
	}
	wantKeys(t, "paged by 250", got, all)
	if want := (ManyKeys + 249) / 250; pages != want && pages != want+1 {
		t.Errorf("%d pages of 250 for %d keys, want %d", pages, ManyKeys, want)
	}
}

package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// oddKeys are valid keys that trip naive URL, path or file handling.
var oddKeys = []struct{ name, key string }{
	{"space", "with space/file name"},
	{"accent", "café/é"},
	{"cjk", "日本/語.json"},
	{"emoji", "emoji/😀"},
	{"plus", "a+b"},
	{"percent", "100%"},
	{"percent-encoded slash", "a%2Fb"},
	{"equals", "k=v/date=2024-01-01"},
	{"tilde", "~tilde"},
	{"crc dotfile", ".0.crc"},
	{"nested crc dotfile", "state/0/1/.1.delta.crc"},
	{"dot prefix segment", ".hidden/x"},
	{"dots in name", "a..b"},
	{"many segments", "s1/s2/s3/s4/s5/s6/s7/s8/s9/s10/s11/s12/s13/s14/s15/s16"},
	{"punctuation", "p/!'()*,;@$&"},
	{"colon", "p/a:b"},
	{"question and hash", "p/q?x=1#frag"},
	{"leading dash", "-dash"},
	{"tab", "p/tab\there"},
}

// testOddKeys: every odd key round-trips, is listed under its own name and
// under its prefixes, and deletes.
func testOddKeys(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	var all []string
	for _, tc := range oddKeys {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte("data of " + tc.key)
			v := mustPut(t, s, tc.key, data, gateway.IfAbsent())
			wantObject(t, s, tc.key, data, v)
			got := listAll(t, s, tc.key)
			if len(got) == 0 || got[0].Key != tc.key || got[0].Version != v {
				t.Errorf("list %q = %q, want %q first at version %q", tc.key, keysOf(got), tc.key, v)
			}
			if dir, _, ok := strings.Cut(tc.key, "/"); ok {
				if !slices.Contains(keysOf(listAll(t, s, dir+"/")), tc.key) {
					t.Errorf("list %q misses %q", dir+"/", tc.key)
				}
			}
			_, err := s.Put(ctx, tc.key, []byte("again"), gateway.IfAbsent())
			WantKeyKind(t, "put if-absent", err, tc.key, gateway.ErrExists)
		})
		all = append(all, tc.key)
	}
	slices.Sort(all)
	wantKeys(t, "list all", keysOf(listAll(t, s, "")), all)
	for _, tc := range oddKeys {
		if err := s.Delete(ctx, tc.key, gateway.None()); err != nil {
			t.Errorf("delete %q: %v", tc.key, err)
		}
		wantAbsent(t, s, tc.key)
	}
	if got := listAll(t, s, ""); len(got) != 0 {
		t.Errorf("list after deleting everything = %q", keysOf(got))
	}
}

// testLongKey: a key as long as the prefixed half of the suite allows
// (MaxKeyLen minus the prefix), in segments of 200 bytes, within every file
// system's name limit, works.
func testLongKey(t *testing.T, s gateway.Store) {
	n := gateway.MaxKeyLen - len(Prefix) - 1
	key := strings.Repeat(strings.Repeat("k", 199)+"/", 5) + strings.Repeat("z", n-1000)
	v := mustPut(t, s, key, []byte("long"), gateway.IfAbsent())
	wantObject(t, s, key, []byte("long"), v)
	wantKeys(t, "list", keysOf(listAll(t, s, "")), []string{key})
	if err := s.Delete(t.Context(), key, gateway.None()); err != nil {
		t.Errorf("delete: %v", err)
	}
	wantAbsent(t, s, key)
}

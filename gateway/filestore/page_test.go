package filestore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
)

// TestListPagePassesOverDirectories: a listing page never reads a
// directory whose keys all sort at or before its start-after, or that is
// a common prefix already given: an unreadable one there does not fail
// it, where a listing from the start does.
func TestListPagePassesOverDirectories(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	for _, k := range []string{"a/x", "a/y/z", "b/1", "b/2", "c"} {
		if _, err := s.Put(ctx, k, []byte(k), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(s.Root(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(s.Root(), "a"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(s.Root(), "a"), 0o755) })
	asUnprivileged(t, func() {
		for _, err := range s.List(ctx, "") {
			storetest.WantKeyKind(t, "a listing from the start", err, "", gateway.ErrPermission)
			break
		}
		for _, tc := range []struct {
			delim, after string
			objs         []string
			prefixes     []string
		}{
			{"", "a~", []string{"b/1", "b/2", "c"}, nil},
			{"/", "a/", []string{"c"}, []string{"b/"}},
			{"/", "a/y/z", []string{"c"}, []string{"b/"}},
		} {
			pg, err := gateway.ListPage(ctx, s, "", tc.delim, tc.after, 10)
			if err != nil {
				t.Errorf("page after %q (delim %q) read the unreadable directory: %v", tc.after, tc.delim, err)
				continue
			}
			var objs []string
			for _, a := range pg.Objects {
				objs = append(objs, a.Key)
			}
			if len(objs) != len(tc.objs) || len(pg.Prefixes) != len(tc.prefixes) {
				t.Errorf("page after %q (delim %q) = %q %q, want %q %q", tc.after, tc.delim, objs, pg.Prefixes, tc.objs, tc.prefixes)
			}
		}
	})
}

package storetest

import (
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// testDirMarkers: a directory marker (gateway.DirMarkerKey) is an ordinary
// empty key beside the directory's keys: both are listed, and deleting
// the marker leaves the others.
func testDirMarkers(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	marker := gateway.DirMarkerKey("dir")
	mustPut(t, s, marker, nil, gateway.IfAbsent())
	mustPut(t, s, "dir/x", []byte("x"), gateway.IfAbsent())
	mustPut(t, s, gateway.DirMarkerKey("dir/sub"), nil, gateway.IfAbsent())
	wantKeys(t, "list dir/", keysOf(listAll(t, s, "dir/")), []string{marker, "dir/sub/" + gateway.DirMarkerName, "dir/x"})
	pg, err := gateway.ListPage(ctx, s, "dir/", "/", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	wantKeys(t, "page of dir/", keysOf(pg.Objects), []string{marker, "dir/x"})
	wantKeys(t, "prefixes of dir/", pg.Prefixes, []string{"dir/sub/"})
	wantObject(t, s, marker, nil, "")
	if err := s.Delete(ctx, marker, gateway.None()); err != nil {
		t.Fatal(err)
	}
	wantAbsent(t, s, marker)
	wantObject(t, s, "dir/x", []byte("x"), "")
	wantKeys(t, "list after deleting the marker", keysOf(listAll(t, s, "dir/")), []string{"dir/sub/" + gateway.DirMarkerName, "dir/x"})
}

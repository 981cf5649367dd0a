package storetest

import (
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// testCreateOnlyTwice: a second create-only write gets ErrExists and the
// first content stays.
func testCreateOnlyTwice(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	v := mustPut(t, s, "commits/7", []byte("first"), gateway.IfAbsent())
	_, err := s.Put(ctx, "commits/7", []byte("second"), gateway.IfAbsent())
	WantKeyKind(t, "second put if-absent", err, "commits/7", gateway.ErrExists)
	wantObject(t, s, "commits/7", []byte("first"), v)

	// An unconditional write still replaces it; create-only still refuses.
	v2 := mustPut(t, s, "commits/7", []byte("third"), gateway.None())
	if v2 == v {
		t.Errorf("overwrite kept version %q", v)
	}
	_, err = s.Put(ctx, "commits/7", []byte("fourth"), gateway.IfAbsent())
	WantKeyKind(t, "put if-absent after overwrite", err, "commits/7", gateway.ErrExists)
	wantObject(t, s, "commits/7", []byte("third"), v2)
}

// testStaleCAS: IfMatch with an old version gets ErrPrecondition and
// changes nothing; with the current version it succeeds.
func testStaleCAS(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	const key = "_ckgate/writer"
	v1 := mustPut(t, s, key, []byte("epoch=1"), gateway.IfAbsent())
	v2 := mustPut(t, s, key, []byte("epoch=2"), gateway.IfMatch(v1))
	_, err := s.Put(ctx, key, []byte("zombie"), gateway.IfMatch(v1))
	WantKeyKind(t, "put stale if-match", err, key, gateway.ErrPrecondition)
	wantObject(t, s, key, []byte("epoch=2"), v2)

	v3 := mustPut(t, s, key, []byte("epoch=3"), gateway.IfMatch(v2))
	if v3 == v2 || v3 == v1 {
		t.Errorf("CAS returned a reused version %q", v3)
	}
	wantObject(t, s, key, []byte("epoch=3"), v3)
	_, err = s.Put(ctx, key, []byte("zombie"), gateway.IfMatch(v2))
	WantKeyKind(t, "put stale if-match again", err, key, gateway.ErrPrecondition)
	wantObject(t, s, key, []byte("epoch=3"), v3)
}

// testIfMatchMissing: IfMatch on an absent key is ErrPrecondition (never a
// create), whether the version came from a deleted object or another key.
func testIfMatchMissing(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	other := mustPut(t, s, "other", []byte("o"), gateway.None())
	gone := mustPut(t, s, "gone", []byte("g"), gateway.None())
	if err := s.Delete(ctx, "gone", gateway.None()); err != nil {
		t.Fatalf("delete: %v", err)
	}
	for _, v := range []gateway.Version{other, gone} {
		for _, key := range []string{"gone", "never"} {
			_, err := s.Put(ctx, key, []byte("x"), gateway.IfMatch(v))
			WantKeyKind(t, "put if-match on a missing key", err, key, gateway.ErrPrecondition)
			wantAbsent(t, s, key)
		}
	}
}

// testConditionalDelete: a stale version keeps the object; the current one
// deletes it; a deleted key is gone from reads and lists and can be created
// again.
func testConditionalDelete(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	const key = "offsets/3"
	v1 := mustPut(t, s, key, []byte("one"), gateway.None())
	v2 := mustPut(t, s, key, []byte("two"), gateway.None())

	err := s.Delete(ctx, key, gateway.IfMatch(v1))
	WantKeyKind(t, "delete stale if-match", err, key, gateway.ErrPrecondition)
	wantObject(t, s, key, []byte("two"), v2)

	if err := s.Delete(ctx, key, gateway.IfMatch(v2)); err != nil {
		t.Fatalf("delete with the current version: %v", err)
	}
	wantAbsent(t, s, key)
	if as := listAll(t, s, "offsets/"); len(as) != 0 {
		t.Errorf("list after delete = %q, want nothing", keysOf(as))
	}
	err = s.Delete(ctx, key, gateway.None())
	WantKeyKind(t, "delete again", err, key, gateway.ErrNotFound)
	err = s.Delete(ctx, key, gateway.IfMatch(v2))
	WantKeyKind(t, "delete if-match on a deleted key", err, key, gateway.ErrNotFound)

	// The key can be created again, and deleted unconditionally.
	v3 := mustPut(t, s, key, []byte("three"), gateway.IfAbsent())
	wantObject(t, s, key, []byte("three"), v3)
	if err := s.Delete(ctx, key, gateway.None()); err != nil {
		t.Fatalf("unconditional delete: %v", err)
	}
	wantAbsent(t, s, key)
}

package storetest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// testNotFound: every read and delete of a missing key is ErrNotFound (and
// nothing else), naming the key.
func testNotFound(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	mustPut(t, s, "offsets/0", []byte("x"), gateway.None())
	for _, key := range []string{"offsets/1", "missing", "offsets/0.tmp", "deep/missing/key"} {
		_, _, err := s.Get(ctx, key)
		WantKeyKind(t, "get", err, key, gateway.ErrNotFound)
		_, err = s.Stat(ctx, key)
		WantKeyKind(t, "stat", err, key, gateway.ErrNotFound)
		rc, _, err := s.GetStream(ctx, key)
		if rc != nil {
			rc.Close()
		}
		WantKeyKind(t, "get stream", err, key, gateway.ErrNotFound)
		err = s.Delete(ctx, key, gateway.None())
		WantKeyKind(t, "delete", err, key, gateway.ErrNotFound)
	}
}

// invalidKeys must be refused by every operation with ErrInvalidKey.
var invalidKeys = []struct{ name, key string }{
	{"empty", ""},
	{"absolute", "/abs"},
	{"dotdot", "a/../b"},
	{"leading dotdot", "../escape"},
	{"only dotdot", ".."},
	{"dot segment", "a/./b"},
	{"dot", "."},
	{"double slash", "a//b"},
	{"NUL", "a\x00b"},
	{"trailing slash", "trailing/"},
	{"backslash", `a\b`},
	{"bad UTF-8", "a\xffb"},
	{"too long", strings.Repeat("k", gateway.MaxKeyLen+1)},
}

// testInvalidKey: malformed keys get ErrInvalidKey, never ErrNotFound or
// ErrPermission, from every operation, and nothing is written.
func testInvalidKey(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	for _, tc := range invalidKeys {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			_, _, err := s.Get(ctx, key)
			WantKeyKind(t, "get", err, key, gateway.ErrInvalidKey)
			_, err = s.Stat(ctx, key)
			WantKeyKind(t, "stat", err, key, gateway.ErrInvalidKey)
			rc, _, err := s.GetStream(ctx, key)
			if rc != nil {
				rc.Close()
			}
			WantKeyKind(t, "get stream", err, key, gateway.ErrInvalidKey)
			_, err = s.Put(ctx, key, []byte("x"), gateway.None())
			WantKeyKind(t, "put", err, key, gateway.ErrInvalidKey)
			_, err = s.Put(ctx, key, []byte("x"), gateway.IfAbsent())
			WantKeyKind(t, "put if-absent", err, key, gateway.ErrInvalidKey)
			_, err = s.PutStream(ctx, key, strings.NewReader("x"), gateway.None())
			WantKeyKind(t, "put stream", err, key, gateway.ErrInvalidKey)
			err = s.Delete(ctx, key, gateway.None())
			WantKeyKind(t, "delete", err, key, gateway.ErrInvalidKey)
		})
	}
	if got := listAll(t, s, ""); len(got) != 0 {
		t.Errorf("store holds %q after refused writes", keysOf(got))
	}
}

// testPrefixIsNotAnObject: a key that is only a prefix of other keys (a
// directory on disk) is not an object.
func testPrefixIsNotAnObject(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	mustPut(t, s, "offsets/0", []byte("0"), gateway.None())
	mustPut(t, s, "state/0/0/1.delta", []byte("d"), gateway.None())
	for _, key := range []string{"offsets", "state", "state/0", "state/0/0"} {
		wantAbsent(t, s, key)
		err := s.Delete(ctx, key, gateway.None())
		WantKeyKind(t, "delete", err, key, gateway.ErrNotFound)
	}
	wantObject(t, s, "offsets/0", []byte("0"), "")
	wantObject(t, s, "state/0/0/1.delta", []byte("d"), "")
}

// testCancelledContext: a write with an already-cancelled context fails,
// reports the cancellation (errors.Is context.Canceled), and leaves no
// object and no change behind.
func testCancelledContext(t *testing.T, s gateway.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	writes := []struct {
		name string
		do   func(key string) error
	}{
		{"put", func(key string) error {
			_, err := s.Put(ctx, key, []byte("x"), gateway.None())
			return err
		}},
		{"put if-absent", func(key string) error {
			_, err := s.Put(ctx, key, []byte("x"), gateway.IfAbsent())
			return err
		}},
		{"put stream", func(key string) error {
			_, err := s.PutStream(ctx, key, strings.NewReader("x"), gateway.IfAbsent())
			return err
		}},
	}
	for _, w := range writes {
		key := "cancelled/" + strings.ReplaceAll(w.name, " ", "-")
		err := w.do(key)
		if err == nil {
			t.Errorf("%s %q with a cancelled context: no error", w.name, key)
		} else if !errors.Is(err, context.Canceled) {
			t.Errorf("%s %q with a cancelled context: error %q is not context.Canceled", w.name, key, err)
		}
		wantAbsent(t, s, key)
	}

	v := mustPut(t, s, "kept", []byte("old"), gateway.None())
	if _, err := s.Put(ctx, "kept", []byte("new"), gateway.IfMatch(v)); err == nil {
		t.Error("CAS with a cancelled context: no error")
	}
	if err := s.Delete(ctx, "kept", gateway.None()); err == nil {
		t.Error("delete with a cancelled context: no error")
	}
	wantObject(t, s, "kept", []byte("old"), v)
}

// testUnsupportedCondition: an unknown condition, and IfAbsent on Delete,
// are refused with ErrUnsupported and change nothing.
func testUnsupportedCondition(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	bogus := gateway.Cond{Kind: 99}
	_, err := s.Put(ctx, "k", []byte("x"), bogus)
	WantKeyKind(t, "put cond 99", err, "k", gateway.ErrUnsupported)
	_, err = s.PutStream(ctx, "k", bytes.NewReader([]byte("x")), bogus)
	WantKeyKind(t, "put stream cond 99", err, "k", gateway.ErrUnsupported)
	wantAbsent(t, s, "k")

	v := mustPut(t, s, "k", []byte("x"), gateway.None())
	err = s.Delete(ctx, "k", gateway.IfAbsent())
	WantKeyKind(t, "delete if-absent", err, "k", gateway.ErrUnsupported)
	err = s.Delete(ctx, "k", bogus)
	WantKeyKind(t, "delete cond 99", err, "k", gateway.ErrUnsupported)
	_, err = s.Put(ctx, "k", []byte("y"), bogus)
	WantKeyKind(t, "put cond 99 over an object", err, "k", gateway.ErrUnsupported)
	wantObject(t, s, "k", []byte("x"), v)
}

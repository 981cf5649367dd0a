package storetest

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// kinds are the error kinds a store operation may return; an error
// matches exactly one of them.
var kinds = []error{
	gateway.ErrNotFound, gateway.ErrExists, gateway.ErrPrecondition,
	gateway.ErrPermission, gateway.ErrUnavailable, gateway.ErrUnsupported,
	gateway.ErrInvalidKey, gateway.ErrUnknownOutcome,
}

// WantKind is the exact-kind check every backend's tests share: it reports
// (with t.Errorf, naming what) unless err is of kind and of no other store
// kind, and is a *gateway.Error. It returns false when err is nil.
func WantKind(t testing.TB, what string, err, kind error) bool {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %v", what, kind)
		return false
	}
	if !errors.Is(err, kind) {
		t.Errorf("%s: error %q is not %v", what, err, kind)
	}
	for _, k := range kinds {
		if k != kind && errors.Is(err, k) {
			t.Errorf("%s: error %q is %v and also %v", what, err, kind, k)
		}
	}
	if !errors.As(err, new(*gateway.Error)) {
		t.Errorf("%s: error %q (%T) is not a *gateway.Error", what, err, err)
	}
	return true
}

// WantKeyKind is WantKind for an error about key: the *gateway.Error must
// name key, and its message must show it.
func WantKeyKind(t testing.TB, what string, err error, key string, kind error) bool {
	t.Helper()
	what += " " + strconv.Quote(key)
	if !WantKind(t, what, err, kind) {
		return false
	}
	var ge *gateway.Error
	if errors.As(err, &ge) && ge.Key != key {
		t.Errorf("%s: error %q names key %q", what, err, ge.Key)
	}
	// A key that prints as itself must appear verbatim in the message.
	if strconv.Quote(key) == `"`+key+`"` && !strings.Contains(err.Error(), key) {
		t.Errorf("%s: error %q does not name the key", what, err)
	}
	return true
}

func mustPut(t *testing.T, s gateway.Store, key string, data []byte, c gateway.Cond) gateway.Version {
	t.Helper()
	v, err := s.Put(t.Context(), key, data, c)
	if err != nil {
		t.Fatalf("put %q (%v): %v", key, c, err)
	}
	if v == "" {
		t.Fatalf("put %q (%v): empty version", key, c)
	}
	return v
}

func mustGet(t *testing.T, s gateway.Store, key string) ([]byte, gateway.Version) {
	t.Helper()
	b, v, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	if v == "" {
		t.Fatalf("get %q: empty version", key)
	}
	return b, v
}

// wantObject checks that key holds want at version v (v "" skips the
// version check) through Get and Stat.
func wantObject(t *testing.T, s gateway.Store, key string, want []byte, v gateway.Version) {
	t.Helper()
	got, gv := mustGet(t, s, key)
	if !bytes.Equal(got, want) {
		t.Errorf("get %q = %q, want %q", key, trunc(got), trunc(want))
	}
	if v != "" && gv != v {
		t.Errorf("get %q: version %q, want %q", key, gv, v)
	}
	a, err := s.Stat(t.Context(), key)
	if err != nil {
		t.Fatalf("stat %q: %v", key, err)
	}
	if a.Key != key || a.Size != int64(len(want)) || a.Version != gv {
		t.Errorf("stat %q = {Key:%q Size:%d Version:%q}, want {Key:%q Size:%d Version:%q}",
			key, a.Key, a.Size, a.Version, key, len(want), gv)
	}
	if a.Modified.IsZero() {
		t.Errorf("stat %q: zero Modified time", key)
	}
}

// wantAbsent checks that Get and Stat report key as not found.
func wantAbsent(t *testing.T, s gateway.Store, key string) {
	t.Helper()
	_, _, err := s.Get(t.Context(), key)
	WantKeyKind(t, "get", err, key, gateway.ErrNotFound)
	_, err = s.Stat(t.Context(), key)
	WantKeyKind(t, "stat", err, key, gateway.ErrNotFound)
}

// listAll collects a listing, failing on the first error.
func listAll(t *testing.T, s gateway.Store, prefix string) []gateway.Attrs {
	t.Helper()
	var out []gateway.Attrs
	for a, err := range s.List(t.Context(), prefix) {
		if err != nil {
			t.Fatalf("list %q after %d entries: %v", prefix, len(out), err)
		}
		out = append(out, a)
	}
	return out
}

// Keys collects the keys of a listing, failing the test on an error.
func Keys(t testing.TB, s gateway.Store, prefix string) []string {
	t.Helper()
	var out []string
	for a, err := range s.List(context.Background(), prefix) {
		if err != nil {
			t.Fatalf("list %q after %d entries: %v", prefix, len(out), err)
		}
		out = append(out, a.Key)
	}
	return out
}

func keysOf(as []gateway.Attrs) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Key
	}
	return out
}

// wantKeys compares two key lists and reports the first difference.
func wantKeys(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d keys, want %d (got %q, want %q)", what, len(got), len(want), truncKeys(got), truncKeys(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("%s: key %d is %q, want %q", what, i, got[i], want[i])
			return
		}
	}
}

func truncKeys(ks []string) []string {
	if len(ks) > 12 {
		return append(ks[:12:12], "...")
	}
	return ks
}

func trunc(b []byte) []byte {
	if len(b) > 64 {
		return append(b[:64:64], "..."...)
	}
	return b
}

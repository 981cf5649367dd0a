package azstore

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
)

// TestListByteOrder: the service lists in UTF-16 order; List yields byte
// order, also for names whose orders differ (supplementary characters
// against U+E000-U+FFFF) and across pages.
func TestListByteOrder(t *testing.T) {
	s := newStore(t, "")
	s.d.pageSize = 2
	keys := []string{
		"u/a", "u/\ud7ff", "u/\ue000", "u/\uff01", "u/😀", "u/😀/x", "u/\uff01/x", "u/z",
		"v/\U0001F600\uff01", "v/\U0001F600\U0001F601", "v/\uff01\U0001F600", "v/plain",
		"😀", "\uff01", "~",
	}
	for _, k := range keys {
		if _, err := s.Put(t.Context(), k, []byte(k), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	for _, prefix := range []string{"", "u/", "v/", "u/😀"} {
		var want []string
		for _, k := range keys {
			if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
				want = append(want, k)
			}
		}
		slices.Sort(want)
		if got := storetest.Keys(t, s, prefix); !slices.Equal(got, want) {
			t.Errorf("list %q =\n%q\nwant\n%q", prefix, got, want)
		}
	}
}

// TestBackendPrefix: a store opened with a prefix keeps every key under
// it, names the caller's keys in results and errors, and sees nothing
// outside it.
func TestBackendPrefix(t *testing.T) {
	outer := newStore(t, "")
	inner := New(outer.Client(), "team/query-1/")
	ctx := t.Context()
	if _, err := outer.Put(ctx, "team/query-10/offsets/0", []byte("other"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	if _, err := outer.Put(ctx, "team/other", []byte("other"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	v, err := inner.Put(ctx, "offsets/0", []byte("mine"), gateway.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	if a, err := outer.Stat(ctx, "team/query-1/offsets/0"); err != nil || a.Version != v {
		t.Fatalf("outer stat = %+v, %v", a, err)
	}
	if got := storetest.Keys(t, inner, ""); !slices.Equal(got, []string{"offsets/0"}) {
		t.Errorf("inner list = %q", got)
	}
	a, err := inner.Stat(ctx, "offsets/0")
	if err != nil || a.Key != "offsets/0" {
		t.Errorf("inner stat = %+v, %v", a, err)
	}
	_, err = inner.Put(ctx, "offsets/0", []byte("again"), gateway.IfAbsent())
	storetest.WantKeyKind(t, "", err, "offsets/0", gateway.ErrExists)
	_, _, err = inner.Get(ctx, "missing")
	storetest.WantKeyKind(t, "", err, "missing", gateway.ErrNotFound)
	_, err = inner.Stat(ctx, "../other")
	storetest.WantKeyKind(t, "", err, "../other", gateway.ErrInvalidKey)
	for a, err := range inner.List(ctx, "/abs") {
		storetest.WantKeyKind(t, "", err, "/abs", gateway.ErrInvalidKey)
		_ = a
	}
	// Azure's 1,024-character limit counts the prefix.
	long := string(bytes.Repeat([]byte("k"), 1020))
	_, err = inner.Put(ctx, long, nil, gateway.None())
	storetest.WantKeyKind(t, "", err, long, gateway.ErrInvalidKey)
	if _, err := outer.Put(ctx, long, nil, gateway.None()); err != nil {
		t.Errorf("a 1,020-character key without prefix: %v", err)
	}
}

// TestListPaging: many pages of a small size.
func TestListPaging(t *testing.T) {
	s := newStore(t, "p")
	s.d.pageSize = 7
	var want []string
	for i := range 50 {
		k := fmt.Sprintf("k/%03d", i)
		want = append(want, k)
		if _, err := s.Put(t.Context(), k, nil, gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
	if got := storetest.Keys(t, s, "k/"); !slices.Equal(got, want) {
		t.Errorf("list = %q", got)
	}
	if got := storetest.Keys(t, s, "k/04"); !slices.Equal(got, want[40:50]) {
		t.Errorf("list k/04 = %q", got)
	}
}

// TestCreateOverUncommittedBlocks: a name holding only staged blocks (a
// failed stream) is free: a create-only Put succeeds (Azurite refuses the
// Put Blob; the store then creates through a block commit), while a
// compare-and-swap still fails and a listing shows nothing.
func TestCreateOverUncommittedBlocks(t *testing.T) {
	s := newStore(t, "")
	ctx := t.Context()
	if _, err := s.d.blob("k").StageBlock(ctx, blockID(newWriteID(), 0), streaming.NopCloser(bytes.NewReader([]byte("junk"))), nil); err != nil {
		t.Fatal(err)
	}
	if got := storetest.Keys(t, s, ""); len(got) != 0 {
		t.Errorf("list = %q", got)
	}
	_, err := s.Put(ctx, "k", []byte("v2"), gateway.IfMatch("0x8D0000000000000"))
	storetest.WantKeyKind(t, "", err, "k", gateway.ErrPrecondition)
	for _, data := range [][]byte{[]byte("created"), nil} {
		v, err := s.Put(ctx, "k", data, gateway.IfAbsent())
		if err != nil {
			t.Fatalf("create over uncommitted blocks: %v", err)
		}
		got, gv, err := s.Get(ctx, "k")
		if err != nil || gv != v || !bytes.Equal(got, data) {
			t.Errorf("get = %q %q %v, want %q at %q", got, gv, err, data, v)
		}
		_, err = s.Put(ctx, "k", []byte("again"), gateway.IfAbsent())
		storetest.WantKeyKind(t, "", err, "k", gateway.ErrExists)
		if err := s.Delete(ctx, "k", gateway.None()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.d.blob("k").StageBlock(ctx, blockID(newWriteID(), 0), streaming.NopCloser(bytes.NewReader([]byte("junk"))), nil); err != nil {
			t.Fatal(err)
		}
	}
}

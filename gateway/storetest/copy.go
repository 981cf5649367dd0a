package storetest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// testCopy: a copy stores src's bytes under dst with dst's condition and
// src's version check; src is left as it was.
func testCopy(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	vs := mustPut(t, s, "offsets/.0.tmp", []byte("v1\n{}"), gateway.None())
	v, err := gateway.Copy(ctx, s, "offsets/.0.tmp", "offsets/0", vs, gateway.IfAbsent())
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	wantObject(t, s, "offsets/0", []byte("v1\n{}"), v)
	wantObject(t, s, "offsets/.0.tmp", []byte("v1\n{}"), vs)

	_, err = gateway.Copy(ctx, s, "offsets/.0.tmp", "offsets/0", "", gateway.IfAbsent())
	WantKeyKind(t, "copy onto an existing dst, if-absent", err, "offsets/0", gateway.ErrExists)
	_, err = gateway.Copy(ctx, s, "absent", "offsets/9", "", gateway.None())
	WantKeyKind(t, "copy of an absent src", err, "absent", gateway.ErrNotFound)
	wantAbsent(t, s, "offsets/9")

	// A stale source version refuses and writes nothing.
	vs2 := mustPut(t, s, "offsets/.0.tmp", []byte("v2"), gateway.IfMatch(vs))
	_, err = gateway.Copy(ctx, s, "offsets/.0.tmp", "offsets/1", vs, gateway.None())
	WantKeyKind(t, "copy of a stale src version", err, "offsets/.0.tmp", gateway.ErrPrecondition)
	wantAbsent(t, s, "offsets/1")

	// IfMatch on dst: stale refuses, current replaces. (vs2 is the version
	// of other bytes: on S3 a version is the content's MD5.)
	_, err = gateway.Copy(ctx, s, "offsets/.0.tmp", "offsets/0", vs2, gateway.IfMatch(vs2))
	WantKeyKind(t, "copy onto a stale dst version", err, "offsets/0", gateway.ErrPrecondition)
	wantObject(t, s, "offsets/0", []byte("v1\n{}"), v)
	_, err = gateway.Copy(ctx, s, "offsets/.0.tmp", "never", "", gateway.IfMatch(v))
	WantKeyKind(t, "copy if-match onto an absent dst", err, "never", gateway.ErrPrecondition)
	v2, err := gateway.Copy(ctx, s, "offsets/.0.tmp", "offsets/0", vs2, gateway.IfMatch(v))
	if err != nil {
		t.Fatalf("copy if-match current: %v", err)
	}
	if v2 == v {
		t.Errorf("copy over dst kept its version %q", v)
	}
	wantObject(t, s, "offsets/0", []byte("v2"), v2)

	// Unconditional, and onto itself.
	v3, err := gateway.Copy(ctx, s, "offsets/0", "offsets/0", "", gateway.None())
	if err != nil {
		t.Fatalf("copy onto itself: %v", err)
	}
	wantObject(t, s, "offsets/0", []byte("v2"), v3)

	for _, bad := range [][2]string{{"a/../b", "x"}, {"x", "/abs"}, {"x", "d/"}} {
		_, err := gateway.Copy(ctx, s, bad[0], bad[1], "", gateway.None())
		WantKind(t, fmt.Sprintf("copy %q to %q", bad[0], bad[1]), err, gateway.ErrInvalidKey)
	}
	_, err = gateway.Copy(ctx, s, "offsets/0", "offsets/5", "", gateway.IfMatch(""))
	WantKeyKind(t, "copy with an empty if-match", err, "offsets/5", gateway.ErrPrecondition)
}

// testCopyRaceIfAbsent: of Racers create-only copies onto one dst from
// different sources, exactly one wins and the others get ErrExists.
func testCopyRaceIfAbsent(t *testing.T, s gateway.Store) {
	ctx := t.Context()
	const racers = 8
	for i := range racers {
		mustPut(t, s, fmt.Sprintf("src/%d", i), fmt.Appendf(nil, "source %d", i), gateway.None())
	}
	results := race(func(i int) raceResult {
		i %= racers
		v, err := gateway.Copy(ctx, s, fmt.Sprintf("src/%d", i), "commits/0", "", gateway.IfAbsent())
		return raceResult{fmt.Appendf(nil, "source %d", i), v, err}
	})
	// race runs Racers (16) writers; two per source: payloads repeat, so
	// exactly one success among all, the rest ErrExists.
	oneWinner(t, s, "commits/0", results, gateway.ErrExists)
}

// testCopyLarge: a 5 MiB object copies whole.
func testCopyLarge(t *testing.T, s gateway.Store) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 5<<20/16)
	mustPut(t, s, "big/src", data, gateway.None())
	v, err := gateway.Copy(t.Context(), s, "big/src", "big/dst", "", gateway.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	wantObject(t, s, "big/dst", data, v)
}

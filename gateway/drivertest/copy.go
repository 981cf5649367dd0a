package drivertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// Copy checks d's Copy on names under p ("" or ending in '/'): a plain
// copy and an overwrite, IfAbsent raced by 8 copies (one wins, the rest
// get ErrExists), IfMatch fresh and stale, a stale and a current source
// version, an absent source, and a 5 MiB object. A refused copy leaves dst
// as it was.
func Copy(t *testing.T, d gateway.Driver, p string) {
	cd, ok := d.(gateway.CopyDriver)
	if !ok {
		t.Fatalf("%T is no gateway.CopyDriver", d)
	}
	ctx := t.Context()
	src, dst := p+"copy/src", p+"copy/dst"
	v1 := put(t, d, src, []byte("one"))

	want := func(t *testing.T, name string, data []byte, v gateway.Version) {
		t.Helper()
		got, gv, err := d.Get(ctx, name)
		if err != nil {
			t.Fatalf("get %s: %v", name, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("%s holds %d bytes %s, want %d %s", name, len(got), head(got), len(data), head(data))
		}
		if v != "" && gv != v {
			t.Errorf("%s is at version %s, the copy returned %s", name, gv, v)
		}
	}
	absent := func(t *testing.T, name string) {
		t.Helper()
		_, err := d.Stat(ctx, name)
		wantKind(t, d, "stat "+name+" after a refused copy", err, gateway.None(), gateway.ErrNotFound)
	}

	t.Run("plain", func(t *testing.T) {
		v, err := cd.Copy(ctx, src, dst, "", gateway.None())
		if err != nil {
			t.Fatalf("copy: %v", err)
		}
		want(t, dst, []byte("one"), v)
		put(t, d, src, []byte("two"))
		v, err = cd.Copy(ctx, src, dst, "", gateway.None())
		if err != nil {
			t.Fatalf("copy over an existing dst: %v", err)
		}
		want(t, dst, []byte("two"), v)
	})
	t.Run("source version", func(t *testing.T) {
		_, err := cd.Copy(ctx, src, p+"copy/stale-src", v1, gateway.None())
		wantKind(t, d, "copy from a stale source version", err, gateway.None(), gateway.ErrPrecondition)
		wantNames(t, "copy from a stale source version", err, src)
		absent(t, p+"copy/stale-src")
		_, err = cd.Copy(ctx, src, p+"copy/stale-src", v1, gateway.IfAbsent())
		wantKind(t, d, "create-only copy from a stale source version", err, gateway.IfAbsent(), gateway.ErrPrecondition)
		wantNames(t, "create-only copy from a stale source version", err, src)
		absent(t, p+"copy/stale-src")
		cur, err := d.Stat(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		v, err := cd.Copy(ctx, src, p+"copy/current-src", cur.Version, gateway.IfAbsent())
		if err != nil {
			t.Fatalf("copy from the current source version: %v", err)
		}
		want(t, p+"copy/current-src", []byte("two"), v)
	})
	t.Run("absent source", func(t *testing.T) {
		for _, c := range []gateway.Cond{gateway.None(), gateway.IfAbsent()} {
			_, err := cd.Copy(ctx, p+"copy/no-such-src", p+"copy/from-nothing", "", c)
			wantKind(t, d, "copy from an absent source ("+c.String()+")", err, c, gateway.ErrNotFound)
			wantNames(t, "copy from an absent source ("+c.String()+")", err, p+"copy/no-such-src")
			absent(t, p+"copy/from-nothing")
		}
	})
	t.Run("if-match", func(t *testing.T) {
		target := p + "copy/cas"
		vt := put(t, d, target, []byte("target"))
		put(t, d, target, []byte("target, rewritten"))
		_, err := cd.Copy(ctx, src, target, "", gateway.IfMatch(vt))
		wantKind(t, d, "copy onto a stale version", err, gateway.IfMatch(vt), gateway.ErrPrecondition)
		wantNames(t, "copy onto a stale version", err, target)
		want(t, target, []byte("target, rewritten"), "")
		_, err = cd.Copy(ctx, src, p+"copy/cas-absent", "", gateway.IfMatch(vt))
		wantKind(t, d, "if-match copy onto an absent key", err, gateway.IfMatch(vt), gateway.ErrPrecondition)
		wantNames(t, "if-match copy onto an absent key", err, p+"copy/cas-absent")
		absent(t, p+"copy/cas-absent")
		cur, err := d.Stat(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		v, err := cd.Copy(ctx, src, target, "", gateway.IfMatch(cur.Version))
		if err != nil {
			t.Fatalf("copy onto the current version: %v", err)
		}
		want(t, target, []byte("two"), v)
	})
	t.Run("if-absent race", func(t *testing.T) {
		target := p + "copy/race"
		const n = 8
		errs := make([]error, n)
		vs := make([]gateway.Version, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			s := p + "copy/race-src-" + string(rune('a'+i))
			put(t, d, s, []byte(s))
			wg.Go(func() {
				<-start
				vs[i], errs[i] = cd.Copy(ctx, s, target, "", gateway.IfAbsent())
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("copies %d and %d both created %s", winner, i, target)
			case err == nil:
				winner = i
			default:
				wantKind(t, d, "a create-only copy that lost the race", err, gateway.IfAbsent(), gateway.ErrExists)
				wantNames(t, "a create-only copy that lost the race", err, target)
			}
		}
		if winner < 0 {
			t.Fatalf("no copy won: %v", errors.Join(errs...))
		}
		want(t, target, []byte(p+"copy/race-src-"+string(rune('a'+winner))), vs[winner])
		_, err := cd.Copy(ctx, src, target, "", gateway.IfAbsent())
		wantKind(t, d, "a create-only copy onto an existing key", err, gateway.IfAbsent(), gateway.ErrExists)
	})
	t.Run("odd names", func(t *testing.T) {
		// Characters URL path and query decoding read differently, in an
		// unconditional copy: the service's own copy on every backend.
		for _, k := range []string{"a+b", "a b", "100%", "q?x=1", "f#1", "é/😀", "a%2Fb"} {
			from, to := p+"copy/odd/"+k, p+"copy/odd-copy/"+k
			put(t, d, from, []byte(k))
			v, err := cd.Copy(ctx, from, to, "", gateway.None())
			if err != nil {
				t.Fatalf("copy %q: %v", from, err)
			}
			want(t, to, []byte(k), v)
		}
	})
	t.Run("5MiB", func(t *testing.T) {
		big := pattern(5<<20 + 3)
		if _, err := d.PutStream(ctx, p+"copy/big", bytes.NewReader(big), gateway.None()); err != nil {
			t.Fatal(err)
		}
		v, err := cd.Copy(ctx, p+"copy/big", p+"copy/big-copy", "", gateway.IfAbsent())
		if err != nil {
			t.Fatalf("copy 5 MiB: %v", err)
		}
		got, gv, err := d.Get(context.Background(), p+"copy/big-copy")
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(got) != sha256.Sum256(big) || gv != v {
			t.Errorf("the 5 MiB copy holds %d bytes at version %s (copy returned %s), want the %d bytes", len(got), gv, v, len(big))
		}
	})
}

//go:build unix

package filestore_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
	"github.com/ckgate/ckgate/internal/hostiletest"
)

// TestNonRegularKeys: a FIFO, a socket, a link to a FIFO and a directory
// where an object belongs are never opened for reading in a way that can
// block, and every read names the key and what it is: ErrInvalidKey for
// the FIFO and the socket, ErrNotFound for the directory (a prefix).
// List skips them; NonRegular yields the FIFO, socket and link.
func TestNonRegularKeys(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	dir := s.Root()
	fifo := hostiletest.FIFO(t, filepath.Join(dir, "metadata"))
	hostiletest.FIFO(t, filepath.Join(dir, "_ckgate", "writer"))
	hostiletest.Socket(t, filepath.Join(dir, "sock"))
	if err := os.Symlink("metadata", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "offsets/0", []byte("v1\n{}\n{}"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		key, what string
		kind      error
	}{
		{"metadata", "a FIFO", gateway.ErrInvalidKey},
		{"_ckgate/writer", "a FIFO", gateway.ErrInvalidKey},
		{"link", "a FIFO", gateway.ErrInvalidKey},
		{"sock", "a socket", gateway.ErrInvalidKey},
		{"offsets", "a directory", gateway.ErrNotFound},
	}
	fifos := []string{fifo, filepath.Join(dir, "_ckgate", "writer")}
	for _, c := range cases {
		check := func(op string, err error) {
			t.Helper()
			storetest.WantKind(t, op+" "+c.key, err, c.kind)
			want := `"` + c.key + `" is ` + c.what + ", not a regular file"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s %s: error %v, want it to say %s", op, c.key, err, want)
			}
		}
		hostiletest.NoBlock(t, "get "+c.key, fifos, func() {
			_, _, err := s.Get(ctx, c.key)
			check("get", err)
		})
		hostiletest.NoBlock(t, "get-stream "+c.key, fifos, func() {
			rc, _, err := s.GetStream(ctx, c.key)
			if rc != nil {
				rc.Close()
			}
			check("get-stream", err)
		})
		hostiletest.NoBlock(t, "get-bounded "+c.key, fifos, func() {
			_, _, err := gateway.GetBounded(ctx, s, c.key, 0)
			check("get-bounded", err)
		})
		_, err := s.Stat(ctx, c.key)
		check("stat", err)
		if c.kind == gateway.ErrInvalidKey {
			check("delete", s.Delete(ctx, c.key, gateway.None()))
		}
	}
	var listed []string
	for a, err := range s.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, a.Key)
	}
	if !slices.Equal(listed, []string{"offsets/0"}) {
		t.Errorf("List = %q, want only offsets/0", listed)
	}
	var odd []string
	for e, err := range gateway.ListNonRegular(ctx, gateway.WithPrefix(s, ""), "") {
		if err != nil {
			t.Fatal(err)
		}
		if e.Mode.IsRegular() || e.Mode.IsDir() {
			t.Errorf("NonRegular yields %s with mode %v", e.Key, e.Mode)
		}
		odd = append(odd, e.Key)
	}
	if want := []string{"_ckgate/writer", "link", "metadata", "sock"}; !slices.Equal(odd, want) {
		t.Errorf("NonRegular = %q, want %q", odd, want)
	}
	// A prefix whose directory is a FIFO lists nothing, without blocking.
	hostiletest.NoBlock(t, "list metadata/", fifos, func() {
		for _, err := range s.List(ctx, "metadata/") {
			t.Errorf("list metadata/: %v", err)
		}
	})
}

// TestNonRegularUnderPrefix: NonRegular passes through a prefix store and
// reports keys relative to it.
func TestNonRegularUnderPrefix(t *testing.T) {
	s := newStore(t)
	hostiletest.FIFO(t, filepath.Join(s.Root(), "team", "q1", "commits", "3"))
	hostiletest.FIFO(t, filepath.Join(s.Root(), "team", "q2", "commits", "3"))
	var got []string
	for e, err := range gateway.ListNonRegular(t.Context(), gateway.WithPrefix(s, "team/q1"), "") {
		if err != nil {
			t.Fatal(err)
		}
		if e.Mode&fs.ModeNamedPipe == 0 {
			t.Errorf("%s: mode %v", e.Key, e.Mode)
		}
		got = append(got, e.Key)
		if err := e.Err("archive"); !errors.Is(err, gateway.ErrInvalidKey) || !strings.Contains(err.Error(), `"commits/3" is a FIFO`) {
			t.Errorf("Err = %v", err)
		}
	}
	if !slices.Equal(got, []string{"commits/3"}) {
		t.Errorf("NonRegular under team/q1 = %q", got)
	}
}

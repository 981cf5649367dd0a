package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

// TestKindOf: the syscall-to-kind mapping of # Errors, for errors that a
// test cannot provoke on a healthy disk (ENOSPC, EIO, EROFS, ...).
func TestKindOf(t *testing.T) {
	s, err := New(t.TempDir()) // learns os.Root's escape error
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, escape := s.d.root.Lstat("/")
	pathErr := func(errno error) error { return &fs.PathError{Op: "openat", Path: "k", Err: errno} }
	tests := []struct {
		err  error
		kind error
	}{
		{pathErr(syscall.ENOENT), gateway.ErrNotFound},
		{pathErr(syscall.ENOTDIR), gateway.ErrNotFound},
		{pathErr(syscall.EISDIR), gateway.ErrNotFound},
		{pathErr(syscall.EACCES), gateway.ErrPermission},
		{pathErr(syscall.EPERM), gateway.ErrPermission},
		{pathErr(syscall.EROFS), gateway.ErrPermission},
		{&os.LinkError{Op: "linkat", Old: "t", New: "k", Err: syscall.EEXIST}, gateway.ErrExists},
		{pathErr(syscall.ENOSPC), gateway.ErrUnavailable},
		{pathErr(syscall.EDQUOT), gateway.ErrUnavailable},
		{pathErr(syscall.EIO), gateway.ErrUnavailable},
		{pathErr(syscall.ELOOP), gateway.ErrInvalidKey},
		{pathErr(syscall.ENAMETOOLONG), gateway.ErrInvalidKey},
		{escape, gateway.ErrInvalidKey},
		{fmt.Errorf("copy: %w", context.Canceled), gateway.ErrUnavailable},
		{context.DeadlineExceeded, gateway.ErrUnavailable},
		{pathErr(os.ErrClosed), gateway.ErrUnavailable},
	}
	for _, tc := range tests {
		if got := kindOf(tc.err); got != tc.kind {
			t.Errorf("kindOf(%v) = %v, want %v", tc.err, got, tc.kind)
		}
	}
	if !isEscape(escape) {
		t.Errorf("isEscape(%v) = false", escape)
	}
	for _, errno := range []error{syscall.ENOTDIR, syscall.EISDIR} {
		if got := writeKindOf(pathErr(errno)); got != gateway.ErrUnsupported {
			t.Errorf("writeKindOf(%v) = %v, want ErrUnsupported", errno, got)
		}
	}
}

// TestLockWaitEndsWithContext: a writer waiting for a held key lock gives
// up when its context ends, and the abandoned wait releases the lock once
// it gets it, so later writers are not blocked.
func TestLockWaitEndsWithContext(t *testing.T) {
	ctx := t.Context()
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	root, err := s.d.openRoot("test", "k")
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := s.d.lock(ctx, root, "test", "k")
	if err != nil {
		t.Fatal(err)
	}
	// The lock is held, so this write cannot finish before its deadline,
	// however the scheduler runs it.
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = s.Put(dctx, "k", []byte("late"), gateway.None())
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, gateway.ErrUnavailable) {
		t.Errorf("put while the lock is held: %v, want ErrUnavailable with context.DeadlineExceeded", err)
	}
	if _, err := s.Stat(ctx, "k"); !errors.Is(err, gateway.ErrNotFound) {
		t.Errorf("stat after the abandoned put: %v, want ErrNotFound", err)
	}
	unlock()
	// Blocks forever (until the test times out) if the abandoned waiter
	// kept the lock.
	if _, err := s.Put(ctx, "k", []byte("now"), gateway.None()); err != nil {
		t.Fatalf("put after unlock: %v", err)
	}
	if err := s.Delete(ctx, "k", gateway.None()); err != nil {
		t.Fatalf("delete after unlock: %v", err)
	}
}

// FuzzKeyPath: mapping any string to a path never panics, and an accepted
// key maps to a clean local path below the root that maps back to the key.
func FuzzKeyPath(f *testing.F) {
	for _, seed := range []string{
		"offsets/0", ".0.crc", "a/../b", "../x", "/abs", "a//b", "trailing/", "a\x00b",
		`a\b`, ".ckgate-tmp-x", "a/.ckgate-locks", "日本/語", "..", ".", "a/./b", "\xff",
	} {
		f.Add(seed)
	}
	const root = "/srv/ckgate/root"
	f.Fuzz(func(t *testing.T, key string) {
		p, err := keyPath("put", key)
		if err != nil {
			if !errors.Is(err, gateway.ErrInvalidKey) {
				t.Fatalf("keyPath(%q): error %v is not ErrInvalidKey", key, err)
			}
			return
		}
		if !filepath.IsLocal(p) || filepath.Clean(p) != p {
			t.Fatalf("keyPath(%q) = %q: not a clean local path", key, p)
		}
		if full := filepath.Join(root, p); !strings.HasPrefix(full, root+string(filepath.Separator)) {
			t.Fatalf("keyPath(%q) = %q escapes the root: %s", key, p, full)
		}
		if filepath.ToSlash(p) != key {
			t.Fatalf("keyPath(%q) = %q does not map back to the key", key, p)
		}
		if reserved(filepath.ToSlash(p)) {
			t.Fatalf("keyPath(%q) = %q uses a reserved name", key, p)
		}
	})
}

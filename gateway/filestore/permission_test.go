package filestore_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
)

const nobody = 65534

// asUnprivileged runs fn with file system permissions enforced. As root
// (which bypasses them) fn runs on a locked OS thread whose file system
// user and group are switched to nobody with setfsuid(2): that drops the
// file-related capabilities of that thread only, and the thread exits with
// the goroutine, so the rest of the process keeps its identity.
func asUnprivileged(t *testing.T, fn func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		fn()
		return
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		if err := unix.Setfsgid(nobody); err != nil {
			done <- err
			return
		}
		if err := unix.Setfsuid(nobody); err != nil {
			done <- err
			return
		}
		defer func() { done <- nil }()
		fn()
	}()
	if err := <-done; err != nil {
		t.Fatalf("switching to an unprivileged file system identity: %v", err)
	}
}

// TestPermissionDenied: EACCES is ErrPermission, never ErrNotFound, for
// reads, listings and writes, with real file modes.
func TestPermissionDenied(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	for _, key := range []string{"locked/file", "closed/dir/file", "readonly/x"} {
		if _, err := s.Put(ctx, key, []byte("data"), gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
	root := s.Root()
	for _, p := range []string{root, filepath.Join(root, "locked"), filepath.Join(root, "closed")} {
		if err := os.Chmod(p, 0o755); err != nil { // t.TempDir is 0700: let nobody in
			t.Fatal(err)
		}
	}
	for p, mode := range map[string]os.FileMode{
		"locked/file": 0o000,
		"closed/dir":  0o000,
		"readonly":    0o555,
	} {
		if err := os.Chmod(filepath.Join(root, p), mode); err != nil {
			t.Fatal(err)
		}
	}

	asUnprivileged(t, func() {
		_, _, err := s.Get(ctx, "locked/file")
		storetest.WantKind(t, "get a mode-000 file", err, gateway.ErrPermission)
		rc, _, err := s.GetStream(ctx, "locked/file")
		if rc != nil {
			rc.Close()
		}
		storetest.WantKind(t, "get stream a mode-000 file", err, gateway.ErrPermission)
		_, err = s.Stat(ctx, "closed/dir/file")
		storetest.WantKind(t, "stat in a mode-000 directory", err, gateway.ErrPermission)
		_, err = s.Put(ctx, "readonly/y", []byte("x"), gateway.IfAbsent())
		storetest.WantKind(t, "create in a read-only directory", err, gateway.ErrPermission)
		n := 0
		for _, err := range s.List(ctx, "closed/") {
			n++
			storetest.WantKind(t, "list a mode-000 directory", err, gateway.ErrPermission)
		}
		if n != 1 {
			t.Errorf("list of a mode-000 directory yielded %d entries, want one error", n)
		}
	})

	// The same requests with privileges (or by the owner) succeed: the
	// failures above came from the modes.
	if os.Geteuid() == 0 {
		if _, _, err := s.Get(ctx, "locked/file"); err != nil {
			t.Errorf("get as root: %v", err)
		}
	}
}

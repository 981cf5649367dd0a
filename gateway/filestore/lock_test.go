package filestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ckgate/ckgate/gateway"
)

// holdLock takes the flock of the lock file path, as another process
// would, until the test ends.
func holdLock(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}

// TestLocksUnderCkgateDir: a compare-and-swap holds its lock under
// _ckgate/.ckgate-locks (a holder of that lock file makes it wait), and a
// root where an earlier ckgate kept .ckgate-locks at the top has that lock
// taken too, so a running earlier ckgate and this one exclude each other.
func TestLocksUnderCkgateDir(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		name := map[bool]string{false: "new root", true: "root with the earlier lock directory"}[legacy]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := New(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			v, err := s.Put(t.Context(), "k", []byte("1"), gateway.None())
			if err != nil {
				t.Fatal(err)
			}
			held := filepath.Join(dir, filepath.FromSlash(lockDir), lockStripe("k"))
			if legacy {
				if err := os.Mkdir(filepath.Join(dir, legacyLockDir), 0o755); err != nil {
					t.Fatal(err)
				}
				held = filepath.Join(dir, legacyLockDir, lockStripe("k"))
			}
			holdLock(t, held)
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			_, err = s.Put(ctx, "k", []byte("2"), gateway.IfMatch(v))
			if !errors.Is(err, gateway.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("CAS while another holds %s: %v, want it to wait for that lock", held, err)
			}
			if _, err := os.Lstat(filepath.Join(dir, legacyLockDir)); legacy == os.IsNotExist(err) {
				t.Fatalf("the earlier lock directory: %v (present before: %v)", err, legacy)
			}
		})
	}
}

package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ckgate/ckgate/gateway"
)

// lockStripes is how many lock files a root may hold; keys share them by
// hash, so the lock directory stays small however many keys are written.
const lockStripes = 1024

// lockStripe returns the name of key's lock file within a lock directory.
func lockStripe(key string) string {
	h := sha256.Sum256([]byte(key))
	return fmt.Sprintf("%03x", binary.BigEndian.Uint16(h[:])%lockStripes)
}

// lockName returns the lock file of key, relative to the root.
func lockName(key string) string {
	return filepath.Join(filepath.FromSlash(lockDir), lockStripe(key))
}

// lock takes the exclusive flock of key and returns its release function.
// When the root still has the lock directory of an earlier ckgate
// (legacyLockDir), the key's lock there is taken first, so that a running
// earlier ckgate and this one exclude each other; a root without it never
// gets one. See the package documentation, # Versions and locks.
func (s *driver) lock(ctx context.Context, root *os.Root, op, key string) (unlock func(), err error) {
	var legacy func()
	if fi, err := root.Lstat(legacyLockDir); err == nil && fi.IsDir() {
		if legacy, err = s.lockFile(ctx, root, op, key, filepath.Join(legacyLockDir, lockStripe(key)), false); err != nil {
			return nil, err
		}
	}
	release, err := s.lockFile(ctx, root, op, key, lockName(key), true)
	if err != nil {
		if legacy != nil {
			legacy()
		}
		return nil, err
	}
	if legacy == nil {
		return release, nil
	}
	return func() { release(); legacy() }, nil
}

// lockFile takes the exclusive flock of the lock file name (creating it,
// and with mkdir its directory, given to the root's owner) for key. It
// waits without spinning: the blocking flock(2) runs in a goroutine, and
// when ctx ends first it returns ctx's error while that goroutine releases
// the lock as soon as it gets it.
func (s *driver) lockFile(ctx context.Context, root *os.Root, op, key, name string, mkdir bool) (unlock func(), err error) {
	f, err := s.openLockFile(root, name)
	if mkdir && errors.Is(err, fs.ErrNotExist) {
		if err = ensureDir(root, s.ownerFor(), filepath.Dir(name)); err == nil {
			f, err = s.openLockFile(root, name)
		}
	}
	if err != nil {
		return nil, gateway.E(op, key, kindOf(err), fmt.Errorf("lock file %s: %w", name, err))
	}
	release := func() {
		// Closing the last descriptor of the open file releases the flock.
		f.Close()
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err == nil {
		return release, nil
	} else if !errors.Is(err, unix.EWOULDBLOCK) {
		release()
		return nil, gateway.E(op, key, kindOf(err), fmt.Errorf("lock %s: %w", name, err))
	}

	got := make(chan error, 1)
	go func() { got <- flock(f, unix.LOCK_EX) }()
	select {
	case err := <-got:
		if err != nil {
			release()
			return nil, gateway.E(op, key, kindOf(err), fmt.Errorf("lock %s: %w", name, err))
		}
		return release, nil
	case <-ctx.Done():
		go func() {
			<-got
			release()
		}()
		return nil, gateway.E(op, key, gateway.ErrUnavailable, fmt.Errorf("waiting for lock %s: %w", name, ctx.Err()))
	}
}

// openLockFile opens the lock file name for writing, creating it when
// missing; a file it creates goes to the root's owner (one that exists
// keeps its owner, who may be another user sharing the root). The lock
// files of a root in use exist, so the plain open comes first.
func (s *driver) openLockFile(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDWR, 0)
	if !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	f, err = root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		s.ownerFor().file(f)
		return f, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return root.OpenFile(name, os.O_RDWR, 0) // created meanwhile by another writer
}

// flock calls flock(2) on f, retrying on EINTR.
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	if ferr != nil {
		return os.NewSyscallError("flock", ferr)
	}
	return nil
}

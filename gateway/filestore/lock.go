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

// lockName returns the lock file of key, relative to the root.
func lockName(key string) string {
	h := sha256.Sum256([]byte(key))
	return filepath.Join(lockDir, fmt.Sprintf("%03x", binary.BigEndian.Uint16(h[:])%lockStripes))
}

// lock takes the exclusive flock of key and returns its release function.
// It waits without spinning: the blocking flock(2) runs in a goroutine, and
// when ctx ends first lock returns ctx's error while that goroutine releases
// the lock as soon as it gets it.
func (s *Store) lock(ctx context.Context, root *os.Root, op, key string) (unlock func(), err error) {
	name := lockName(key)
	f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err = root.MkdirAll(lockDir, 0o755); err == nil {
			f, err = root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return nil, gateway.E(op, key, kindOf(err), fmt.Errorf("lock file: %w", err))
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

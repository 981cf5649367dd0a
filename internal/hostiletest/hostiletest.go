//go:build unix

// Package hostiletest plants hostile files (FIFOs, sockets, sparse giants)
// in test trees and runs code that must not block on them with a watchdog,
// so a test of a reader that regresses fails instead of hanging forever.
package hostiletest

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Watchdog is how long NoBlock lets f run: far beyond what a read that
// does not block takes, even under the race detector.
const Watchdog = 30 * time.Second

// FIFO creates a named pipe at path (and its parent directories).
func FIFO(t testing.TB, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Socket binds a Unix socket at path (closed at the end of the test). The
// path must be short (about 100 bytes).
func Socket(t testing.TB, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("unix socket at %s: %v", path, err)
	}
	t.Cleanup(func() { l.Close() })
	return path
}

// Sparse creates (or replaces) path as a sparse file of size bytes: it
// takes no disk space and reads as zeros.
func Sparse(t testing.TB, path string, size int64) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return path
}

// NoBlock runs f and fails the test when it has not returned within
// Watchdog: it blocked on one of the fifos. The fifos are then opened for
// writing and closed, again and again, until f returns, so that a blocked
// open(2) ends (and reads end of file) and the test can go on.
func NoBlock(t testing.TB, what string, fifos []string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return
	case <-time.After(Watchdog):
	}
	t.Errorf("%s: still running after %s: it blocked on a FIFO (%v)", what, Watchdog, fifos)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, p := range fifos {
			if w, err := os.OpenFile(p, os.O_RDWR, 0); err == nil {
				w.Close()
			}
		}
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
}

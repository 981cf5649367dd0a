// Package testproc holds the helpers tests use to run programs as other
// processes: a copy of the running test binary that another user may
// execute, in a directory that user can reach.
//
// It is for tests only (it takes a testing.TB and fails or skips it).
package testproc

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// CopyExecutable copies the program at from to the new file to (mode
// 0755), failing tb on any error; an existing to is an error.
func CopyExecutable(tb testing.TB, from, to string) {
	tb.Helper()
	in, err := os.Open(from)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
}

// SelfForOtherUser returns a new temporary directory that every user can
// reach (each directory above it opened to 0755, whatever the modes of the
// temporary directories are) and, in it, a copy of the running test
// binary named name, so that a child switched to another uid can run it
// and use the directory. It skips tb unless the test runs as root, which
// switching users needs.
func SelfForOtherUser(tb testing.TB, name string) (dir, bin string) {
	tb.Helper()
	if os.Getuid() != 0 {
		tb.Skip("switching to another uid needs root")
	}
	dir = tb.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	bin = filepath.Join(dir, name)
	CopyExecutable(tb, self, bin)
	return dir, bin
}

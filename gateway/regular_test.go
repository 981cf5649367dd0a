//go:build unix

package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/hostiletest"
)

// TestReadRegularFile: a local input file is read whole up to the bound;
// a FIFO, a socket, a directory and a bigger (sparse) file are refused,
// named, without blocking.
func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(ok, []byte("name: q\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := gateway.ReadRegularFile(ok, 8); err != nil || string(b) != "name: q\n" {
		t.Fatalf("regular file: %q %v", b, err)
	}
	fifo := hostiletest.FIFO(t, filepath.Join(dir, "fifo"))
	sock := hostiletest.Socket(t, filepath.Join(dir, "s"))
	big := hostiletest.Sparse(t, filepath.Join(dir, "big"), 1<<30)
	for _, c := range []struct{ path, want string }{
		{fifo, "is a FIFO, not a regular file"},
		{sock, "is a socket, not a regular file"},
		{dir, "is a directory, not a regular file"},
		{big, "holds 1024 MiB, more than the 16 MiB"},
		{ok, "more than the 7 bytes"},
	} {
		limit := int64(0)
		if c.path == ok {
			limit = 7
		}
		hostiletest.NoBlock(t, "read "+c.path, []string{fifo}, func() {
			_, err := gateway.ReadRegularFile(c.path, limit)
			if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want it to name the file and say %q", c.path, err, c.want)
			}
		})
	}
}

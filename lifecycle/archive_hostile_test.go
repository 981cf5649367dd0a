//go:build unix

package lifecycle_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/internal/hostiletest"
	"github.com/ckgate/ckgate/lifecycle"
)

// TestHostileArchiveRefusesNonRegular: a FIFO or a socket in the source
// (where metadata, a commit or the writer record belongs, or anywhere) is
// not skipped: Archive refuses with ErrNotRegular naming it, without
// blocking, and copies nothing.
func TestHostileArchiveRefusesNonRegular(t *testing.T) {
	for _, c := range []struct{ key, what string }{
		{"metadata", "a FIFO"},
		{"commits/1", "a FIFO"},
		{"_ckgate/writer", "a FIFO"},
		{"state/0/0/s", "a socket"},
	} {
		t.Run(strings.ReplaceAll(c.key, "/", "_"), func(t *testing.T) {
			srcDir := copyDir(t, sparkAgg)
			p := filepath.Join(srcDir, filepath.FromSlash(c.key))
			removeIfExists(t, p)
			var fifos []string
			if c.what == "a FIFO" {
				fifos = append(fifos, hostiletest.FIFO(t, p))
			} else {
				hostiletest.Socket(t, p)
			}
			dstDir := filepath.Join(t.TempDir(), "archive")
			src, dst := openStore(t, srcDir), openStore(t, dstDir)
			var err error
			hostiletest.NoBlock(t, "archive", fifos, func() {
				_, err = lifecycle.Archive(t.Context(), src, dst, lifecycle.ArchiveOptions{Source: srcDir, Dest: dstDir, Now: now})
			})
			want := `"` + c.key + `" is ` + c.what + ", not a regular file"
			if !errors.Is(err, lifecycle.ErrNotRegular) || !strings.Contains(err.Error(), want) {
				t.Fatalf("archive: %v, want ErrNotRegular saying %s", err, want)
			}
			if got := tree(t, dstDir); len(got) != 0 {
				t.Errorf("the refused archive copied %d files", len(got))
			}
		})
	}
}

// removeIfExists removes the file at p, if there is one.
func removeIfExists(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

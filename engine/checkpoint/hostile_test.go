//go:build unix

package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/internal/hostiletest"
)

// hostileCopy copies a testdata checkpoint to a temp directory and opens it
// through the local-disk backend.
func hostileCopy(t *testing.T, rel string) (string, gateway.Store) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ck")
	if err := os.CopyFS(dir, os.DirFS(sparkPath(rel))); err != nil {
		t.Fatal(err)
	}
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gateway.Close(st) })
	return dir, st
}

const hostileRel = "checkpoint-version-3.2.0-streaming-aggregate-with-repartition"

// TestHostileInspectNonRegular: a FIFO where metadata or a commit belongs
// is reported as such (not as a missing file), without blocking.
func TestHostileInspectNonRegular(t *testing.T) {
	for _, key := range []string{"metadata", "commits/1"} {
		dir, st := hostileCopy(t, hostileRel)
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		fifo := hostiletest.FIFO(t, p)
		var r *Report
		hostiletest.NoBlock(t, "inspect", []string{fifo}, func() { r = inspect(t, st, Options{}) })
		if r == nil || !hasFinding(r, SeverityError, FindingNotRegular, key) {
			t.Fatalf("%s as a FIFO: findings %+v", key, r)
		}
	}
}

// TestHostileInspectSparseGiant: a 1 GiB (sparse) offsets entry and
// commit are corrupt findings naming them; they are never read.
func TestHostileInspectSparseGiant(t *testing.T) {
	dir, st := hostileCopy(t, hostileRel)
	for _, key := range []string{"offsets/1", "commits/1", "metadata"} {
		hostiletest.Sparse(t, filepath.Join(dir, filepath.FromSlash(key)), 1<<30)
	}
	r := inspect(t, st, Options{})
	for _, key := range []string{"offsets/1", "commits/1", "metadata"} {
		if !hasFinding(r, SeverityError, FindingCorrupt, key) {
			t.Errorf("%s of 1 GiB: no corrupt finding in %+v", key, r.Findings)
		}
	}
	if _, err := ReadOffsets(t.Context(), st, 1); err == nil || !strings.Contains(err.Error(), `"offsets/1" holds 1024 MiB`) {
		t.Errorf("ReadOffsets of 1 GiB: %v", err)
	}
}

package delta

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
)

// realTables is testdata/delta: tables written by Delta itself (see its
// INDEX.md and NOTICE.txt).
const realTables = "../../testdata/delta"

// copyTable copies testdata/delta/<name> into a temporary directory, so a
// test may change it, and returns a store on the copy and its path.
func copyTable(t *testing.T, name string) (gateway.Store, string) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(realTables, name))); err != nil {
		t.Fatal(err)
	}
	return fileStore(t, dst), dst
}

func fileStore(t testing.TB, dir string) gateway.Store {
	t.Helper()
	s, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openTable(t *testing.T, s gateway.Store, url string) *Table {
	t.Helper()
	tb, err := Open(context.Background(), s, url)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// jsonReplay builds version v from the commits 0..v alone, never a
// checkpoint: the reference a checkpoint-based snapshot must equal.
func jsonReplay(t *testing.T, s gateway.Store, v int64) *Snapshot {
	t.Helper()
	st := newState()
	for i := int64(0); i <= v; i++ {
		acts, err := ReadCommit(context.Background(), s, i)
		if err != nil {
			t.Fatal(err)
		}
		st.apply(CommitKey(i), acts)
		st.version = i
	}
	snap, err := st.snapshot(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func paths(fs []Add) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Path
	}
	return out
}

// putCommit writes the commit of version v holding lines.
func putCommit(t *testing.T, s gateway.Store, v int64, lines ...string) {
	t.Helper()
	data := ""
	for _, l := range lines {
		data += l + "\n"
	}
	if _, err := s.Put(context.Background(), CommitKey(v), []byte(data), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
}

package filestore_test

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
)

// TestRootWritesKeepTheOwner: run as root in a directory of another user,
// everything the store creates (the root made by MakeBucket, the key's
// directories, the objects, the lock directory and files) belongs to that
// user, so the user can go on writing there.
func TestRootWritesKeepTheOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving files to another user needs root")
	}
	const nobody = 65534
	parent := t.TempDir()
	if err := os.Chown(parent, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	st, err := filestore.Open(ctx, &url.URL{Scheme: "file", Path: filepath.Join(parent, "a", "ck")})
	if err != nil {
		t.Fatal(err)
	}
	s := st.(*filestore.Store)
	defer s.Close()
	if err := s.MakeBucket(ctx); err != nil {
		t.Fatal(err)
	}
	v, err := s.Put(ctx, "x/y", []byte("1"), gateway.None())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "x/y", []byte("2"), gateway.IfMatch(v)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "z", []byte("3"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "z", gateway.None()); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(parent, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		n++
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != nobody || st.Gid != nobody {
			t.Errorf("%s belongs to %d:%d, want the directory owner's %d:%d", p, st.Uid, st.Gid, nobody, nobody)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 7 { // parent, a, ck, x, x/y, _ckgate, its lock directory, a lock file
		t.Fatalf("walked %d paths, want the store's directories, objects and lock files", n)
	}
}

package filestore_test

import (
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/storetest"
)

// tempFiles returns the store's temp files left anywhere under dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".ckgate-tmp-") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSymlinkOutOfRoot: keys through symbolic links that leave the root are
// refused with ErrInvalidKey, for reads and writes, and touch nothing
// outside; links inside the root are followed.
func TestSymlinkOutOfRoot(t *testing.T) {
	ctx := t.Context()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"reldir":  "../outside",
		"absdir":  outside,
		"relfile": "../outside/secret",
		"absfile": filepath.Join(outside, "secret"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "real"), []byte("real"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(root, "inside")); err != nil {
		t.Fatal(err)
	}
	s, err := filestore.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	for _, key := range []string{"reldir/secret", "absdir/secret", "relfile", "absfile"} {
		_, _, err := s.Get(ctx, key)
		storetest.WantKind(t, "get "+key, err, gateway.ErrInvalidKey)
		_, err = s.Stat(ctx, key)
		storetest.WantKind(t, "stat "+key, err, gateway.ErrInvalidKey)
		err = s.Delete(ctx, key, gateway.None())
		storetest.WantKind(t, "delete "+key, err, gateway.ErrInvalidKey)
	}
	// The links' own names too: a put must not replace a link out of the
	// root, nor call it an existing key.
	for _, key := range []string{"reldir/new", "absdir/new", "reldir/deeper/new", "relfile", "absfile", "reldir", "absdir"} {
		for _, c := range []gateway.Cond{gateway.None(), gateway.IfAbsent()} {
			_, err := s.Put(ctx, key, []byte("x"), c)
			storetest.WantKind(t, "put "+key, err, gateway.ErrInvalidKey)
		}
	}
	ents, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "secret" {
		t.Errorf("outside the root now holds %v", ents)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "secret")); err != nil || string(b) != "secret" {
		t.Errorf("outside file = %q, %v", b, err)
	}

	b, _, err := s.Get(ctx, "inside")
	if err != nil || string(b) != "real" {
		t.Errorf("get through a link inside the root = %q, %v", b, err)
	}
	if got, want := storetest.Keys(t, s, ""), []string{"inside", "real"}; !slices.Equal(got, want) {
		t.Errorf("list = %q, want %q (links out of the root skipped)", got, want)
	}
}

// TestCrashLeftovers: a temp file left by a crashed writer is never listed
// and never blocks a later write, and a failed write removes its own.
func TestCrashLeftovers(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.MkdirAll(filepath.Join(dir, "offsets"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".ckgate-tmp-CRASHED", "offsets/.ckgate-tmp-CRASHED"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := storetest.Keys(t, s, ""); len(got) != 0 {
		t.Errorf("list = %q, want nothing", got)
	}
	if _, err := s.Put(ctx, "offsets/0", []byte("batch 0"), gateway.IfAbsent()); err != nil {
		t.Fatalf("create after a crash: %v", err)
	}
	if got, want := storetest.Keys(t, s, ""), []string{"offsets/0"}; !slices.Equal(got, want) {
		t.Errorf("list = %q, want %q", got, want)
	}
	_, _, err = s.Get(ctx, ".ckgate-tmp-CRASHED")
	storetest.WantKind(t, "get a temp file", err, gateway.ErrInvalidKey)

	// A stream that fails, or whose context ends, half-way leaves no object
	// and no temp file of its own.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cancelling := io.MultiReader(strings.NewReader("first half"), readerFunc(func([]byte) (int, error) {
		cancel()
		return 0, nil
	}), strings.NewReader("second half"))
	_, err = s.PutStream(cctx, "offsets/1", cancelling, gateway.IfAbsent())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("put stream cancelled half-way: %v, want context.Canceled", err)
	}
	failing := io.MultiReader(strings.NewReader("first half"), readerFunc(func([]byte) (int, error) {
		return 0, io.ErrUnexpectedEOF
	}))
	_, err = s.PutStream(ctx, "offsets/2", failing, gateway.None())
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("put stream from a failing reader: %v, want io.ErrUnexpectedEOF", err)
	}
	for _, key := range []string{"offsets/1", "offsets/2"} {
		_, err := s.Stat(ctx, key)
		storetest.WantKind(t, "stat "+key, err, gateway.ErrNotFound)
	}
	want := []string{filepath.Join(dir, ".ckgate-tmp-CRASHED"), filepath.Join(dir, "offsets/.ckgate-tmp-CRASHED")}
	if got := tempFiles(t, dir); !slices.Equal(got, want) {
		t.Errorf("temp files = %q, want only the crashed writer's %q", got, want)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestDirectoriesAreNotObjects: a write cannot put an object over a
// directory or below another object (a file system cannot hold both), and
// says so with ErrUnsupported; reads see no object.
func TestDirectoriesAreNotObjects(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	if _, err := s.Put(ctx, "offsets/0", []byte("0"), gateway.None()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []gateway.Cond{gateway.None(), gateway.IfAbsent()} {
		_, err := s.Put(ctx, "offsets", []byte("x"), c)
		storetest.WantKind(t, "put over a directory ("+c.String()+")", err, gateway.ErrUnsupported)
		_, err = s.Put(ctx, "offsets/0/x", []byte("x"), c)
		storetest.WantKind(t, "put below an object ("+c.String()+")", err, gateway.ErrUnsupported)
	}
	_, err := s.Put(ctx, "offsets", []byte("x"), gateway.IfMatch("1-2-3"))
	storetest.WantKind(t, "CAS on a directory", err, gateway.ErrPrecondition)
	_, _, err = s.Get(ctx, "offsets/0/x")
	storetest.WantKind(t, "get below an object", err, gateway.ErrNotFound)
	if got := storetest.Keys(t, s, "offsets/0/"); len(got) != 0 {
		t.Errorf("list below an object = %q", got)
	}
	if got, want := storetest.Keys(t, s, ""), []string{"offsets/0"}; !slices.Equal(got, want) {
		t.Errorf("list = %q, want %q", got, want)
	}
}

// TestReservedKeys: the store's own names cannot be used as keys, while
// other dotfiles can.
func TestReservedKeys(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	for _, key := range []string{".ckgate-tmp-x", "a/.ckgate-tmp-x", ".ckgate-locks/000", "_ckgate/.ckgate-locks/000", ".ckgate-anything"} {
		_, err := s.Put(ctx, key, []byte("x"), gateway.None())
		storetest.WantKind(t, "put "+key, err, gateway.ErrInvalidKey)
		_, err = s.Stat(ctx, key)
		storetest.WantKind(t, "stat "+key, err, gateway.ErrInvalidKey)
	}
	// A CAS creates lock files; they are never listed.
	v, err := s.Put(ctx, ".0.crc", []byte("crc"), gateway.None())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, ".0.crc", []byte("crc2"), gateway.IfMatch(v)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "_ckgate", ".ckgate-locks")); err != nil {
		t.Errorf("no lock directory _ckgate/.ckgate-locks after a CAS: %v", err)
	}
	// Nothing of the store's own beside the keys, outside _ckgate/.
	if _, err := os.Lstat(filepath.Join(s.Root(), ".ckgate-locks")); !os.IsNotExist(err) {
		t.Errorf("a CAS made the lock directory .ckgate-locks at the top of the root: %v", err)
	}
	if got, want := storetest.Keys(t, s, ""), []string{".0.crc"}; !slices.Equal(got, want) {
		t.Errorf("list = %q, want %q", got, want)
	}
}

// TestOpenAndMakeBucket: New refuses a missing root naming it; Open accepts
// it, requests fail with ErrNotFound until MakeBucket creates it.
func TestOpenAndMakeBucket(t *testing.T) {
	ctx := t.Context()
	missing := filepath.Join(t.TempDir(), "a", "b")
	_, err := filestore.New(missing)
	storetest.WantKind(t, "new on a missing root", err, gateway.ErrNotFound)
	if err != nil && !strings.Contains(err.Error(), missing) {
		t.Errorf("error %q does not name %s", err, missing)
	}

	u, err := gateway.ParseURL(missing) // a plain path becomes a file:// URL
	if err != nil {
		t.Fatal(err)
	}
	s, err := filestore.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer gateway.Close(s)
	_, err = s.Stat(ctx, "metadata")
	storetest.WantKind(t, "stat before make-bucket", err, gateway.ErrNotFound)
	for _, err := range s.List(ctx, "") {
		storetest.WantKind(t, "list before make-bucket", err, gateway.ErrNotFound)
	}
	for range 2 { // MakeBucket succeeds on an existing root too
		if err := gateway.MakeBucket(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx, "metadata", []byte("{}"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(missing, "metadata")); err != nil {
		t.Errorf("object not under the root: %v", err)
	}

	for _, raw := range []string{"file://remote/x", "s3://bucket/x", "file:relative"} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := filestore.Open(ctx, u); err == nil {
			t.Errorf("Open(%q) succeeded", raw)
		}
	}
	if err := gateway.Close(s); err != nil {
		t.Fatal(err)
	}
	_, err = s.Stat(ctx, "metadata")
	storetest.WantKind(t, "stat after close", err, gateway.ErrUnavailable)
}

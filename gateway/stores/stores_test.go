package stores_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
)

func TestRegistrySchemes(t *testing.T) {
	got := stores.Registry().Schemes()
	for _, want := range []string{"file", "s3", "gs", "az"} {
		if !slices.Contains(got, want) {
			t.Errorf("Schemes() = %v, missing %q", got, want)
		}
	}
}

func TestOpenLocalPathAndFileURL(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ckpt")
	urls := map[string]string{
		"plain path": dir,
		"file URL":   (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String(),
	}
	// Write through the plain path, read back through the URL: both name
	// the same directory.
	s, err := stores.Open(ctx, urls["plain path"])
	if err != nil {
		t.Fatalf("Open(%q): %v", urls["plain path"], err)
	}
	t.Cleanup(func() { gateway.Close(s) })
	if err := gateway.MakeBucket(ctx, s); err != nil {
		t.Fatalf("MakeBucket: %v", err)
	}
	if _, err := s.Put(ctx, "metadata", []byte(`{"id":"q"}`), gateway.IfAbsent()); err != nil {
		t.Fatalf("Put: %v", err)
	}
	u, err := stores.Open(ctx, urls["file URL"])
	if err != nil {
		t.Fatalf("Open(%q): %v", urls["file URL"], err)
	}
	t.Cleanup(func() { gateway.Close(u) })
	b, _, err := u.Get(ctx, "metadata")
	if err != nil || string(b) != `{"id":"q"}` {
		t.Fatalf("Get through %s = %q, %v", urls["file URL"], b, err)
	}
	if _, _, err := u.Get(ctx, "absent"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("Get(absent) = %v, want ErrNotFound", err)
	}
}

func TestOpenUnknownSchemeListsKnownOnes(t *testing.T) {
	_, err := stores.Open(context.Background(), "ftp://host/ckpt?token=secret")
	if err == nil {
		t.Fatal("Open(ftp://...) succeeded")
	}
	msg := err.Error()
	for _, want := range []string{`"ftp"`, "az, file, gs, s3"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %s", msg, want)
		}
	}
	if strings.Contains(msg, "secret") {
		t.Errorf("error %q leaks a secret", msg)
	}
}

// A local root, spelled as a path or a file URL, is created; a cloud URL
// never creates anything, even when the store behind it could.
func TestMakeLocalRoot(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	for name, raw := range map[string]func(dir string) string{
		"plain path": func(dir string) string { return dir },
		"file URL":   func(dir string) string { return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String() },
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(base, name, "new", "root")
			s, err := stores.Open(ctx, raw(dir))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { gateway.Close(s) })
			if err := stores.MakeLocalRoot(ctx, raw(dir), s); err != nil {
				t.Fatalf("MakeLocalRoot(%s): %v", raw(dir), err)
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				t.Fatalf("%s not made: %v", dir, err)
			}
		})
	}
	dir := filepath.Join(base, "not-for-cloud")
	s, err := stores.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gateway.Close(s) })
	for _, raw := range []string{"s3://bucket/prefix", "gs://bucket/prefix", "az://account/container/prefix"} {
		if err := stores.MakeLocalRoot(ctx, raw, s); err != nil {
			t.Errorf("MakeLocalRoot(%s): %v", raw, err)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a cloud URL made %s: %v", dir, err)
	}
}

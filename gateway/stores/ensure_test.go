package stores_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
)

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

package stores_test

import (
	"context"
	"errors"
	"net/url"
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

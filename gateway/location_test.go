package gateway_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// Every spelling of one root is one canonical location.
func TestCanonicalRootSpellings(t *testing.T) {
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(real, "ck"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "ck"), filepath.Join(real, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(real, "up")); err != nil {
		t.Fatal(err)
	}
	want := gateway.FileLocation(filepath.Join(real, "ck"))
	for _, raw := range []string{
		filepath.Join(real, "ck"),
		filepath.Join(real, "ck") + "/",
		filepath.Join(real, "ck") + "/.",
		filepath.Join(real, "ck", "..", "ck"),
		strings.Replace(filepath.Join(real, "ck"), "/", "//", -1),
		"file://" + filepath.Join(real, "ck"),
		"file:///" + filepath.Join(real, "ck"),
		"file://" + filepath.Join(real, "c%6B"),
		"FILE://" + filepath.Join(real, "ck"),
		filepath.Join(real, "alias"),
		filepath.Join(real, "up", "alias"),
		filepath.Join(real, "up", "ck"),
	} {
		got, err := gateway.CanonicalRoot(raw)
		if err != nil || got != want {
			t.Errorf("CanonicalRoot(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"/", "//", "/.", "/tmp/..", "file:///", "file:////", "file:/"} {
		if got, err := gateway.CanonicalRoot(raw); err != nil || got != "file:///" {
			t.Errorf("CanonicalRoot(%q) = %q, %v; want file:///", raw, got, err)
		}
	}
	t.Chdir("/")
	if got, err := gateway.CanonicalRoot("."); err != nil || got != "file:///" {
		t.Errorf(`CanonicalRoot(".") from / = %q, %v`, got, err)
	}
}

func TestCanonicalRootClouds(t *testing.T) {
	for raw, want := range map[string]string{
		"s3://bucket/team/q1":  "s3://bucket/team/q1",
		"s3://bucket/team/q1/": "s3://bucket/team/q1",
		"s3://bucket//team/q1?endpoint=http://127.0.0.1:9000&region=x": "s3://bucket/team/q1",
		"S3://Bucket/team/Q1":   "s3://bucket/team/Q1",
		"s3://bucket/t%65am/q1": "s3://bucket/team/q1",
		"s3://bucket":           "s3://bucket",
		"gs://bucket/a/b":       "gs://bucket/a/b",
		"az://acct/Cont/a":      "az://acct/cont/a",
		"azure://acct/cont/a/":  "az://acct/cont/a",
		"az://acct/cont":        "az://acct/cont",
	} {
		if got, err := gateway.CanonicalRoot(raw); err != nil || got != want {
			t.Errorf("CanonicalRoot(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"s3:///x", "s3://b/a/../b", "s3://b/a/./b", "az://acct", "file://host/x", "ftp://x/y"} {
		if got, err := gateway.CanonicalRoot(raw); err == nil {
			t.Errorf("CanonicalRoot(%q) = %q, want an error", raw, got)
		}
	}
}

// A key reached through a link inside the root is located at its real
// path; one whose real path leaves the root is refused.
func TestCanonicalKeyResolvesLinks(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	root := filepath.Join(dir, "store")
	for _, d := range []string{"store/ck/offsets", "outside"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "ck", "offsets"), filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ck/offsets", filepath.Join(root, "rel")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "outside"), filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	base := gateway.FileLocation(root)
	want := gateway.FileLocation(filepath.Join(root, "ck", "offsets", "2"))
	for _, key := range []string{"ck/offsets/2", "alias/2", "rel/2"} {
		if got, err := gateway.CanonicalKey(base, key); err != nil || got != want {
			t.Errorf("CanonicalKey(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
	// the last name is not followed: a delete removes the link itself
	if got, _ := gateway.CanonicalKey(base, "alias"); got != gateway.FileLocation(filepath.Join(root, "alias")) {
		t.Errorf("CanonicalKey(alias) = %q", got)
	}
	if _, err := gateway.CanonicalKey(base, "out/x"); !errors.Is(err, gateway.ErrInvalidKey) {
		t.Errorf("a key through a link out of the root: %v, want ErrInvalidKey", err)
	}
	for _, key := range []string{"../x", "/etc/passwd", "a//b", "a/./b", ""} {
		if _, err := gateway.CanonicalKey(base, key); !errors.Is(err, gateway.ErrInvalidKey) {
			t.Errorf("CanonicalKey(%q): %v, want ErrInvalidKey", key, err)
		}
	}
	if got, _ := gateway.CanonicalKey("s3://b/team", "q1/offsets/2"); got != "s3://b/team/q1/offsets/2" {
		t.Errorf("cloud key: %q", got)
	}
}

func TestContainerURL(t *testing.T) {
	for raw, want := range map[string]string{
		"s3://b/team/q1?endpoint=http://h:1": "s3://b?endpoint=http://h:1",
		"gs://b/x":                           "gs://b",
		"az://acct/cont/a/b":                 "az://acct/cont",
		"/tmp/x":                             "",
	} {
		if got, err := gateway.ContainerURL(raw); err != nil || got != want {
			t.Errorf("ContainerURL(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

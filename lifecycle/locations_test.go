package lifecycle_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckgate/ckgate/lifecycle"
)

// TestCheckApart: archive locations are compared canonically: a DEST equal
// to, inside or around URL is refused however it is spelt (a symbolic link
// to the source, "..", "//", a file:// URL, percent-encoding, a path that
// does not exist yet); siblings that share a name prefix are apart.
func TestCheckApart(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(base, "ck")
	if err := os.MkdirAll(filepath.Join(ck, "offsets"), 0o755); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(ck, alias); err != nil {
		t.Fatal(err)
	}
	overlap := [][2]string{
		{ck, ck},
		{ck, ck + "/arch"},
		{ck, ck + "//arch/"},
		{ck, ck + "/offsets/../arch"},
		{ck, alias + "/arch/deeper"},
		{alias, ck + "/arch"},
		{"file://" + ck, ck + "/arch"},
		{"file://" + base + "/c%6B", ck + "/arch"},
		{ck + "/sub", ck},
		{ck, base},
		{ck, "/"},
		{"s3://bucket/q1", "s3://bucket/q1/arch"},
		{"s3://bucket/q1?region=x", "s3://bucket//q1/"},
		{"s3://bucket/q1/arch", "s3://bucket/q1"},
		{"s3://bucket", "s3://bucket/arch"},
		{"gs://b/a/q", "gs://b/a/q/x"},
		{"az://acct/cont/q", "az://acct/cont/q/arch"},
		{"s3://b/q?endpoint=http://127.0.0.1:9000", "s3://b/q/a?endpoint=http://127.0.0.1:9000/"},
	}
	for _, c := range overlap {
		if err := lifecycle.CheckApart("URL", c[0], "DEST", c[1]); !errors.Is(err, lifecycle.ErrOverlap) {
			t.Errorf("CheckApart(%s, %s) = %v, want ErrOverlap", c[0], c[1], err)
		}
	}
	apart := [][2]string{
		{ck, ck + "-arch"},
		{ck, base + "/ck2/x"},
		{ck, "s3://bucket" + ck},
		{"s3://bucket/q1", "s3://bucket/q10"},
		{"s3://bucket/q1", "s3://other/q1/arch"},
		{"s3://bucket/q1", "gs://bucket/q1/arch"},
		{"az://acct/cont/q", "az://acct/cont2/q/arch"},
		{"s3://b/q?endpoint=http://127.0.0.1:9000", "s3://b/q/a?endpoint=http://127.0.0.1:9001"},
	}
	for _, c := range apart {
		if err := lifecycle.CheckApart("URL", c[0], "DEST", c[1]); err != nil {
			t.Errorf("CheckApart(%s, %s) = %v, want nil", c[0], c[1], err)
		}
	}
}

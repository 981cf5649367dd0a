package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A mistyped store URL ("s3:bucket") is refused as a bad URL (exit 2) and
// never taken for a local directory; a malformed URL exits 2 on every
// scheme.
func TestBadStoreURLsExit2(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, raw := range []string{"s3:bucket", "S3:bucket/p", "gs:/bucket", "az:acct/c", "azure:acct/c"} {
		ckgate(t, Options{}, "", "store", "mb", raw).wantErr(t, ExitUsage, "did you mean")
		ckgate(t, Options{}, "x", "store", "put", "-", raw, "k").wantErr(t, ExitUsage, "did you mean")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a mistyped URL made %v", entries)
	}
	for _, raw := range []string{"s3:///x", "gs:///x", "az://acct", "az://acct/c?colour=red", "gs://b?colour=red", "s3://b?colour=red",
		"file://otherhost/x", "file:relative", "s3://b/%zz"} {
		if r := ckgate(t, Options{}, "", "store", "ls", raw); r.code != ExitUsage {
			t.Errorf("store ls %s: exit %d, want %d\n%s", raw, r.code, ExitUsage, r.stderr)
		}
	}
}

// store rm of a missing key exits 2, under a checkpoint too.
func TestStoreRmMissingUnderCheckpoint(t *testing.T) {
	root := newRoot(t)
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0)
	ckgate(t, Options{}, "{}", "store", "put", "-", root, "metadata").want(t, 0)
	ckgate(t, Options{}, "", "store", "rm", "--kind", "housekeeping", root, "offsets/7").wantErr(t, ExitUsage, `"offsets/7"`, "not found")
	if _, err := os.Stat(filepath.Join(root, "metadata")); err != nil {
		t.Fatal(err)
	}
}

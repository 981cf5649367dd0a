package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestArchiveRefusesNestedLocations: `archive ck ck/arch` (and a DEST
// reached through a symbolic link to ck, or with "..", or a source inside
// DEST, or a fresh-start root inside the source) is refused, exit 2, before
// anything is created at DEST.
func TestArchiveRefusesNestedLocations(t *testing.T) {
	base := t.TempDir()
	src := filepath.Join(base, "ck")
	if err := os.CopyFS(src, os.DirFS("../../testdata/spark/checkpoint-version-3.2.0-streaming-aggregate-with-repartition")); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(src, alias); err != nil {
		t.Fatal(err)
	}
	o := Options{}
	for _, args := range [][]string{
		{"archive", src, filepath.Join(src, "arch")},
		{"archive", src, "file://" + src + "/arch"},
		{"archive", src, filepath.Join(alias, "arch")},
		{"archive", alias, filepath.Join(src, "offsets", "..", "arch")},
		{"archive", filepath.Join(src, "state"), src},
		{"archive", src, base},
		{"archive", "--fresh-start", "--reason", "r", "--new", filepath.Join(src, "v2"), src, filepath.Join(base, "a2")},
		{"fresh-start", "--new", filepath.Join(base, "v2"), "--archive-to", filepath.Join(src, "arch"), "--reason", "r", "--from-offsets", `{"logOffset":0}`, src},
	} {
		ckgate(t, o, "", args...).wantErr(t, ExitUsage, "the locations overlap", "inside")
	}
	for _, p := range []string{filepath.Join(src, "arch"), filepath.Join(src, "v2"), filepath.Join(base, "a2")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("a refused archive created %s", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(src, "offsets", "arch")); err == nil {
		t.Error("a refused archive created offsets/arch")
	}
}

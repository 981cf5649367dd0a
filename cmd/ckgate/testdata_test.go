package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// sparkTestdata is the copy of Spark's golden checkpoints (INDEX.md there
// says what each is and what Spark's tests assert about it).
const sparkTestdata = "../../testdata/spark"

// sparkCheckpoints lists every checkpoint directory under testdata/spark
// (a directory with a top-level metadata file), relative to it.
func sparkCheckpoints(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(sparkTestdata, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "state" || d.Name() == "offsets" || d.Name() == "commits") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "metadata" {
			rel, _ := filepath.Rel(sparkTestdata, filepath.Dir(p))
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// copyTree copies a testdata checkpoint into a temp dir, to mutate it.
func copyTree(t *testing.T, rel string) string {
	t.Helper()
	src := filepath.Join(sparkTestdata, filepath.FromSlash(rel))
	dst := filepath.Join(t.TempDir(), "ckpt")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, r), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, r), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

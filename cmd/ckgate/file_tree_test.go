package main

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What a command left on disk: the files of a tree, its snapshot
// (contents, links, directories) and the comparison of two snapshots.

// listTree lists the files under dir (relative paths); none for a missing dir.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// keysLeft lists the files under dir (full paths) but the local store's
// lock files (.ckgate-locks): the keys a command left behind.
func keysLeft(dir string) []string {
	var left []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, ".ckgate-locks") {
			left = append(left, p)
		}
		return nil
	})
	return left
}

// snapshotTree returns path → content of every regular file under dir,
// and the link targets of its symbolic links.
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			m[p] = "-> " + target
			return err
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			m[p] = string(b)
			return err
		case d.IsDir():
			m[p+"/"] = ""
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameTree compares two snapshots, leaving out the local store's lock
// files (.ckgate-locks/), which every write may create.
func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for _, m := range []map[string]string{before, after} {
		for p := range m {
			if strings.Contains(p, "/.ckgate-locks/") || strings.HasSuffix(p, "/.ckgate-locks") {
				delete(m, p)
			}
		}
	}
	for p, v := range after {
		if b, ok := before[p]; !ok || b != v {
			t.Errorf("%s: %s changed or appeared", what, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s: %s disappeared", what, p)
		}
	}
}

// unchangedTree fails t unless after is before, lock files included.
func unchangedTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if maps.Equal(before, after) {
		return
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s created %s", what, k)
		}
	}
	for k, v := range before {
		if w, ok := after[k]; !ok {
			t.Errorf("%s removed %s", what, k)
		} else if w != v {
			t.Errorf("%s changed %s", what, k)
		}
	}
	t.FailNow()
}

// Package filetree reads a directory tree into memory: the fixtures and
// outputs tests compare, a checkpoint on the local disk as a map of keys.
package filetree

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Read reads every file under root (dotfiles too), keyed by its slash
// path relative to root.
func Read(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(r)] = b
		return nil
	})
	return out, err
}

// Package filetree reads a directory tree into memory and writes one
// back: the fixtures and outputs tests compare, a checkpoint on the local
// disk as a map of keys.
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

// WriteFile writes data to the file of slash path key under root, making
// its directories as needed (test setup: no fsync).
func WriteFile(root, key string, data []byte) error {
	p := filepath.Join(root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// Write writes files (slash path → bytes) under root with WriteFile.
func Write(root string, files map[string][]byte) error {
	for k, v := range files {
		if err := WriteFile(root, k, v); err != nil {
			return err
		}
	}
	return nil
}

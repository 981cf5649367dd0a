package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad writes fuzzed bytes to a spec file and checks that Load never
// panics and that every rejection names the file.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(full))
	paths, _ := filepath.Glob("../../testdata/specs/*.yaml")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name: q\nsource: {kind: files, path: in}\nsink: {kind: files, path: out}\n"))
	f.Add([]byte("name: [\n"))
	dir := f.TempDir()
	path := filepath.Join(dir, "query.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name %s: %v", path, err)
			}
			return
		}
		if s.Dir != dir {
			t.Fatalf("Dir %q, want %q", s.Dir, dir)
		}
	})
}

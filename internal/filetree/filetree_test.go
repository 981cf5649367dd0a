package filetree

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

func TestRead(t *testing.T) {
	root := t.TempDir()
	want := map[string][]byte{"a": []byte("1"), ".hidden": []byte("2"), "d/e/.f.crc": []byte("3"), "d/empty": {}}
	for k, v := range want {
		p := filepath.Join(root, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, v, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "no-files"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Read(root)
	if err != nil || !maps.EqualFunc(got, want, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Errorf("Read = %q, %v; want %q", got, err, want)
	}
	if _, err := Read(filepath.Join(root, "missing")); !os.IsNotExist(err) {
		t.Errorf("a missing root: %v, want not-exist", err)
	}
}

package filetree

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteRead: what Write puts under a root, Read gives back (dotfiles,
// empty files, nested directories), and directories alone are no files.
func TestWriteRead(t *testing.T) {
	root := t.TempDir()
	want := map[string][]byte{"a": []byte("1"), ".hidden": []byte("2"), "d/e/.f.crc": []byte("3"), "d/empty": {}}
	if err := Write(root, want); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "no-files"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Read(root)
	if err != nil || !maps.EqualFunc(got, want, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Errorf("Read = %q, %v; want %q", got, err, want)
	}
	if b, err := os.ReadFile(filepath.Join(root, "d", "e", ".f.crc")); err != nil || string(b) != "3" {
		t.Errorf("d/e/.f.crc on disk: %q, %v", b, err)
	}
	if _, err := Read(filepath.Join(root, "missing")); !os.IsNotExist(err) {
		t.Errorf("a missing root: %v, want not-exist", err)
	}
	if err := WriteFile(filepath.Join(root, "a"), "x", nil); err == nil {
		t.Error("WriteFile under a file: no error")
	}
}

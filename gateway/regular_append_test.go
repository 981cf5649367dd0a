//go:build unix

package gateway_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/hostiletest"
)

// AppendRegularFile refuses a FIFO (without blocking on it), a directory
// and a link to a FIFO, naming what each is, and appends to a regular file.
func TestAppendRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := hostiletest.FIFO(t, filepath.Join(dir, "fifo"))
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{fifo: "a FIFO", dir: "a directory", link: "a FIFO"} {
		f, err := gateway.AppendRegularFile(name)
		var nr *gateway.NotRegularFileError
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) || !errors.As(err, &nr) || nr.Path != name {
			if f != nil {
				f.Close()
			}
			t.Errorf("AppendRegularFile(%s) = %v, want an error naming it and %q", name, err, want)
		}
	}
	log := filepath.Join(dir, "access.jsonl")
	for _, line := range []string{"a\n", "b\n"} {
		f, err := gateway.AppendRegularFile(log)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
	}
	if got, _ := os.ReadFile(log); string(got) != "a\nb\n" {
		t.Fatalf("appended %q", got)
	}
	if fi, _ := os.Stat(log); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
}

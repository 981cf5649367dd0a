//go:build linux

package filestore

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
)

// TestConformanceNamedTemps runs the conformance suite the way a file
// system without O_TMPFILE (or a process without /proc) is served: every
// write, create-only ones too, through a named temp file.
func TestConformanceNamedTemps(t *testing.T) {
	saved := procFDs
	procFDs = func() bool { return false }
	t.Cleanup(func() { procFDs = saved })
	storetest.Run(t, func(t *testing.T) gateway.Store {
		s, err := New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestCreateOnlyTempHasNoName: a create-only write on Linux never names
// its temp file (the directory holds only the key while it is written and
// after), where the fallback names one.
func TestCreateOnlyTempHasNoName(t *testing.T) {
	for _, named := range []bool{false, true} {
		saved := procFDs
		if named {
			procFDs = func() bool { return false }
		}
		dir := t.TempDir()
		s, err := New(dir)
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		_, err = s.PutStream(t.Context(), "offsets/0", readerFunc(func(p []byte) (int, error) {
			ents, err := os.ReadDir(filepath.Join(dir, "offsets"))
			if err != nil {
				return 0, err
			}
			for _, e := range ents {
				seen = append(seen, e.Name())
			}
			return 0, io.EOF
		}), gateway.IfAbsent())
		procFDs = saved
		if err != nil {
			t.Fatal(err)
		}
		temps := 0
		for _, n := range seen {
			if strings.HasPrefix(n, tempPrefix) {
				temps++
			}
		}
		if want := map[bool]int{false: 0, true: 1}[named]; temps != want {
			t.Fatalf("named fallback %v: the directory held %q during the write, want %d temp names", named, seen, want)
		}
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

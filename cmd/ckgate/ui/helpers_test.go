package ui

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckgate/ckgate/gateway/filestore"
)

// sparkFleet copies some of Spark's own checkpoints (testdata/spark) into
// a new directory and returns it.
func sparkFleet(t testing.TB, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.CopyFS(filepath.Join(dir, n), os.DirFS(filepath.Join("..", "..", "..", "testdata", "spark", n))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func fileRoot(t testing.TB, dir string) Root {
	t.Helper()
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRoot(dir, st)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// serve starts the server for roots; its Host check accepts what a
// browser sends for the listening address.
func serve(t testing.TB, roots ...Root) *httptest.Server {
	t.Helper()
	s := &Server{Loader: &Loader{Roots: roots}}
	ts := httptest.NewServer(s)
	s.Hosts = AllowedHosts(ts.Listener.Addr().String())
	t.Cleanup(ts.Close)
	return ts
}

var sparkNames = []string{
	"checkpoint-version-3.2.0-session-window-with-repartition",
	"checkpoint-version-2.4.0-streaming-join",
	"checkpoint-test-offsetId-commitId-inconsistent",
	"checkpoint-version-4.0.0-checkpoint-v2",
}

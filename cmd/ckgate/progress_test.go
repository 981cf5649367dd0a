package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestProgressBars: archive and rehearse show a bar on stderr when asked
// (--progress, as on a terminal) and nothing when stderr is not a
// terminal: a log or a pipe stays machine-clean.
func TestProgressBars(t *testing.T) {
	src := t.TempDir()
	if err := os.CopyFS(src, os.DirFS("../../testdata/spark/checkpoint-version-3.2.0-streaming-aggregate-with-repartition")); err != nil {
		t.Fatal(err)
	}
	keys := 0
	filepath.WalkDir(src, func(_ string, d os.DirEntry, _ error) error {
		if !d.IsDir() {
			keys++
		}
		return nil
	})
	dest := filepath.Join(t.TempDir(), "archive")
	r := ckgate(t, Options{}, "", "archive", src, dest, "--progress")
	r.want(t, 0, "verified")
	if want := "copying"; !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "/"+strconv.Itoa(keys)) {
		t.Errorf("archive --progress: stderr shows no bar of %d keys:\n%q", keys, r.stderr)
	}
	r = ckgate(t, Options{}, "", "archive", src, filepath.Join(t.TempDir(), "archive"))
	r.want(t, 0, "verified")
	if r.stderr != "" {
		t.Errorf("archive to a pipe wrote to stderr:\n%q", r.stderr)
	}

	_, specPath := rehearseDemo(t, 0)
	r = ckgate(t, Options{}, "", "rehearse", "--seed", "5", "--scenarios", "1", "--progress", specPath)
	r.want(t, 0, "verdict: PASS")
	if !strings.Contains(r.stderr, "rehearsing reference") || !strings.Contains(r.stderr, "rehearsing crash-after-offsets") {
		t.Errorf("rehearse --progress: stderr shows no bar naming the steps:\n%q", r.stderr)
	}
	r = ckgate(t, Options{}, "", "rehearse", "--seed", "5", "--scenarios", "1", "--progress=false", specPath)
	r.want(t, 0, "verdict: PASS")
	if r.stderr != "" {
		t.Errorf("rehearse --progress=false wrote to stderr:\n%q", r.stderr)
	}
}

//go:build unix

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/internal/hostiletest"
)

// TestHostileFIFOCheckpointFiles: a FIFO as `metadata` or `_ckgate/writer`
// blocks no command (each runs in a child process under a watchdog): run,
// store cat and archive refuse naming the key and saying it is a FIFO,
// inspect reports it, validate-access fails its probe of metadata saying
// so, store rm does not remove it, and nothing replaces it.
func TestHostileFIFOCheckpointFiles(t *testing.T) {
	pristine := hostileDemo(t)
	for _, key := range []string{"metadata", "_ckgate/writer"} {
		t.Run(strings.ReplaceAll(key, "/", "_"), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			if err := os.CopyFS(dir, os.DirFS(pristine)); err != nil {
				t.Fatal(err)
			}
			ck := "demo/checkpoint"
			p := filepath.Join(dir, ck, filepath.FromSlash(key))
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			hostiletest.FIFO(t, p)
			want := `"` + key + `" is a FIFO, not a regular file`

			r := runChild(t, dir, "run", "--checkpoint", ck, "--available-now", hostileSpec)
			if r.code == 0 || !strings.Contains(r.stderr, want) {
				t.Errorf("run: exit %d, stderr:\n%s\nwant it to say %s", r.code, r.stderr, want)
			}
			r = runChild(t, dir, "store", "cat", ck, key)
			if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
				t.Errorf("store cat: exit %d, stderr:\n%s", r.code, r.stderr)
			}
			r = runChild(t, dir, "inspect", ck)
			if r.code != ExitFailure || !strings.Contains(r.stdout, "not-regular-file") || !strings.Contains(r.stdout, want) {
				t.Errorf("inspect: exit %d, stdout:\n%s", r.code, r.stdout)
			}
			r = runChild(t, dir, "archive", ck, filepath.Join(t.TempDir(), "arch"))
			if r.code != ExitFailure || !strings.Contains(r.stderr, want) {
				t.Errorf("archive: exit %d, stderr:\n%s", r.code, r.stderr)
			}
			r = runChild(t, dir, "validate-access", ck)
			if key == "metadata" && (r.code != ExitFailure || !strings.Contains(r.stdout, want)) {
				t.Errorf("validate-access: exit %d, stdout:\n%s", r.code, r.stdout)
			}
			r = runChild(t, dir, "store", "rm", ck, key)
			if r.code == 0 {
				t.Errorf("store rm of a FIFO: exit 0\n%s", r.stdout)
			}
			if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
				t.Errorf("%s after the commands: %v %v, want the FIFO left alone", key, fi, err)
			}
		})
	}
}

// TestHostileFIFOInputFiles: a FIFO given as a spec, a plan, a policy
// input or a bucket configuration is refused at once, named, exit 2.
func TestHostileFIFOInputFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := hostiletest.FIFO(t, filepath.Join(dir, "in.yaml"))
	ck := filepath.Join(dir, "ck")
	for _, args := range [][]string{
		{"run", "--checkpoint", ck, "--available-now", fifo},
		{"compat", "--spec", fifo, ck},
		{"compat", "--plan", fifo, ck},
		{"policy", "eval", fifo},
		{"audit", "--lifecycle", fifo, ck},
	} {
		r := runChild(t, dir, args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, fifo) || !strings.Contains(r.stderr, "is a FIFO, not a regular file") {
			t.Errorf("ckgate %s: exit %d, stderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if _, err := os.Stat(ck); err == nil {
		t.Errorf("a refused command created %s", ck)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/internal/emulator"
)

// A checkpoint root inside another checkpoint's tree, or above one, is
// refused without any policy data, before anything is written (not even
// the checkpoint's directory), naming the other root.
func TestRunRefusesRootInsideOrAboveCheckpoint(t *testing.T) {
	dir, sp := demoDir(t)
	runCLI(t, dir, "run", "--format", "text", "--checkpoint", "demo/checkpoint", "--batches", "1", sp).want(t, 0)
	other := filepath.Join(dir, "demo", "checkpoint")
	before := snapshotTree(t, dir)
	for _, tc := range []struct{ root, rel string }{
		{"demo/checkpoint/sub", "inside"},
		{"demo/checkpoint/state/0", "inside"},
		{"demo", "above"},
		{".", "above"},
	} {
		for _, format := range []string{"text", "json"} {
			r := runCLI(t, dir, "run", "--format", format, "--checkpoint", tc.root, "--batches", "1", sp)
			r.wantErr(t, 3, tc.rel, other)
			unchangedTree(t, "refused run --checkpoint "+tc.root, before, snapshotTree(t, dir))
		}
	}
	// the checkpoint itself resumes
	runCLI(t, dir, "run", "--format", "text", "--checkpoint", "demo/checkpoint", "--batches", "1", sp).want(t, 0, "resuming")
}

// A non-empty directory that is not a checkpoint gets a warning, not a
// refusal; an empty or new one gets none.
func TestRunWarnsOnNonEmptyDirectory(t *testing.T) {
	dir, sp := demoDir(t)
	notes := filepath.Join(dir, "notes")
	os.MkdirAll(notes, 0o755)
	os.WriteFile(filepath.Join(notes, "todo.txt"), []byte("x"), 0o644)
	r := runCLI(t, dir, "run", "--format", "text", "--checkpoint", "notes", "--batches", "1", sp)
	r.want(t, 0, "new checkpoint")
	if !strings.Contains(r.stderr, "warning") || !strings.Contains(r.stderr, "not a checkpoint") || !strings.Contains(r.stderr, notes) {
		t.Fatalf("no warning about the non-empty directory:\n%s", r.stderr)
	}
	// (a demo of its own: the first query owns this one's sink)
	dir, sp = demoDir(t)
	r = runCLI(t, dir, "run", "--format", "text", "--checkpoint", "fresh", "--batches", "1", sp)
	r.want(t, 0)
	if strings.Contains(r.stderr, "warning") {
		t.Fatalf("a new checkpoint warned:\n%s", r.stderr)
	}
}

// The same refusals on S3 (versitygw): the roots above are found through
// the bucket, the one below by listing the new root's prefix; nothing is
// written to the bucket.
func TestRunRefusesRootInsideOrAboveCheckpointS3(t *testing.T) {
	b, at := s3Bucket(t, emulator.Versitygw(t))
	ckgate(t, Options{}, `{"id":"9538ada3-a233-4697-8b02-cc66250189a3"}`, "store", "put", "-", at("team/q1"), "metadata").want(t, 0)
	dir, sp := demoDir(t)
	listing := func() string { return ckgate(t, Options{}, "", "store", "ls", "-r", at("")).stdout }
	before := listing()
	for _, tc := range []struct{ root, rel string }{{"team/q1/sub", "inside"}, {"team", "above"}} {
		r := runCLI(t, dir, "run", "--format", "text", "--checkpoint", at(tc.root), "--batches", "1", sp)
		r.wantErr(t, 3, tc.rel, "s3://"+b+"/team/q1")
		if after := listing(); after != before {
			t.Fatalf("refused run --checkpoint %s changed the bucket:\n%s\nthen\n%s", tc.root, before, after)
		}
	}
}

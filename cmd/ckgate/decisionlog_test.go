package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Break glass is recorded in a regular decision log file: /dev/null, a
// directory or the console (-) is refused, and the key stays.
func TestBreakGlassNeedsDecisionLogFile(t *testing.T) {
	root := newRoot(t)
	ckgate(t, Options{}, "", "store", "mb", root).want(t, 0)
	ckgate(t, Options{}, "{}", "store", "put", "-", root, "metadata").want(t, 0)
	// the job's entry (only its writer session creates one)
	os.MkdirAll(filepath.Join(root, "offsets"), 0o755)
	if err := os.WriteFile(filepath.Join(root, "offsets", "0"), []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	rm := func(log string) result {
		return ckgate(t, Options{}, "", "store", "rm", "--reason", "INC-7", "--decision-log", log, root, "offsets/0")
	}
	rm("/dev/null").wantErr(t, ExitUsage, "/dev/null", "regular file")
	rm(t.TempDir()).wantErr(t, ExitUsage, "regular file")
	rm("-").wantErr(t, ExitDenied, "not the console")
	if _, err := os.Stat(filepath.Join(root, "offsets", "0")); err != nil {
		t.Fatalf("offsets/0 was removed: %v", err)
	}
	log := filepath.Join(t.TempDir(), "d.jsonl")
	rm(log).want(t, 0, `removed "offsets/0"`)
	if data, err := os.ReadFile(log); err != nil || len(data) == 0 {
		t.Fatalf("decision log %q: %v", data, err)
	}
}

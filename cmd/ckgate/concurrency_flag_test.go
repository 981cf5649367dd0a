package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Every command with --concurrency refuses one below 1 the same way:
// exit 2, naming the flag and the value, before anything is read or
// written.
func TestConcurrencyBelowOneRefused(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	at := func(p string) string { return filepath.Join(dir, p) }
	for _, n := range []string{"0", "-3"} {
		for _, args := range [][]string{
			{"archive", "--concurrency", n, src, at("arc")},
			{"archive", "verify", "--concurrency", n, at("arc")},
			{"restore", "--concurrency", n, at("arc"), at("dest")},
			{"fresh-start", "--concurrency", n, "--new", at("new"), "--archive-to", at("arc"), "--reason", "INC-1", "--from-offsets", `{"batch":0}`, src},
			{"retention", "apply", "--concurrency", n, src},
			{"retention", "apply", "--concurrency", n, "--plan", at("plan.json")},
		} {
			ckgate(t, Options{}, "", args...).wantErr(t, ExitUsage, "--concurrency "+n+": want 1 or more")
		}
	}
	if got := listTree(t, dir); len(got) != 0 {
		t.Fatalf("a refused command wrote %v", got)
	}
}

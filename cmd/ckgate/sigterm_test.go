package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// signalsReadyEnv makes the CLI child (TestMain) say signalsReadyMessage on
// stderr once SIGINT and SIGTERM cancel its command, so a test signals it
// only when the signal can no longer kill it outright.
const (
	signalsReadyEnv     = "CKGATE_TEST_SIGNALS_READY"
	signalsReadyMessage = "ckgate-test: signals handled"
)

// TestSIGTERMEndsRetention: `retention plan|apply` on a checkpoint with a
// commit named math.MaxInt64 ends within a second of SIGTERM, without a
// plan or a deletion (the planner used to spin on the batch ids up to it,
// ignoring the signal). Whether the refusal or the signal comes first, the
// status is a failure (1, naming the file) or interrupted (130).
func TestSIGTERMEndsRetention(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the CLI")
	}
	for _, sub := range []string{"plan", "apply"} {
		t.Run(sub, func(t *testing.T) {
			dir := copyTree(t, "checkpoint-version-4.0.0-checkpoint-v2/rocksdb/dedup")
			data, err := os.ReadFile(filepath.Join(dir, "commits", "0"))
			if err != nil {
				t.Fatal(err)
			}
			const bad = "commits/9223372036854775807"
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(bad)), data, 0o644); err != nil {
				t.Fatal(err)
			}
			before := readDir(t, dir)
			c := startChildWatching(t, t.TempDir(), []string{signalsReadyEnv + "=1"}, []string{signalsReadyMessage},
				"retention", sub, "--min-batches", "1", dir)
			select {
			case <-c.seen(signalsReadyMessage):
			case <-c.exited:
				t.Fatalf("ended before it handled signals: %s", c.output())
			}
			// the refusal may come first: a process that already ended is fine
			if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
				t.Fatal(err)
			}
			c.wait(t, time.Second)
			out := c.output()
			switch c.code() {
			case ExitInterrupted:
			case ExitFailure:
				if !strings.Contains(out, bad) || !strings.Contains(out, "batch id out of range") {
					t.Errorf("exit 1 without naming %s as out of range:\n%s", bad, out)
				}
			default:
				t.Errorf("exit %d, want %d or %d:\n%s", c.code(), ExitInterrupted, ExitFailure, out)
			}
			if strings.Contains(out, "retain from") || strings.Contains(out, "deleted") {
				t.Errorf("printed a plan or deletions:\n%s", out)
			}
			if d := changed(before, readDir(t, dir), false); len(d) > 0 {
				t.Errorf("the checkpoint changed: %v", d)
			}
		})
	}
}

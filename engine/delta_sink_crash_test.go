package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/gateway"
)

// TestDeltaSinkCrashAtEveryWrite: the query crashes at every write in
// turn (before it and right after it: the write done, its answer lost),
// then restarts; the table then holds every row of the reference exactly
// once, its log has no gap, and each batch of the query is one version.
func TestDeltaSinkCrashAtEveryWrite(t *testing.T) {
	files := genEvents(3, 32, 5)
	want := sessionRows(files)
	s := mustSpec(t, deltaSpec(sessionSpec, "mem://out"))
	checkpointed := false
	for _, action := range []gateway.FaultAction{gateway.Crash, gateway.CrashAfter} {
		for k := 1; ; k++ {
			w := inputWorld(t, files)
			faults := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Nth: k, Action: action})
			_, err := runAll(context.Background(), s, w.Options(faults, 1))
			if faults.Fired() == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if k < 30 {
					t.Fatalf("only %d writes", k)
				}
				break
			}
			if _, err := runAll(context.Background(), s, w.Options(nil, 2)); err != nil {
				t.Fatalf("%v at write %d: restart: %v", action, k, err)
			}
			out := w.Store("out")
			if got := deltaTableRows(t, out); !slices.Equal(got, want) {
				t.Fatalf("%v at write %d: the table holds %d rows, the reference %d", action, k, len(got), len(want))
			}
			tb, err := delta.Open(context.Background(), out, "")
			if err != nil {
				t.Fatal(err)
			}
			l := tb.Log()
			if l.EarliestReplayable() != 0 || int64(len(l.Commits)) != l.Latest()+1 {
				t.Fatalf("%v at write %d: the log has a gap: %v", action, k, l.Commits)
			}
			seen := map[int64]bool{}
			for v := range l.Latest() + 1 {
				acts, err := delta.ReadCommit(context.Background(), out, v)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range acts {
					if a.Txn != nil {
						if seen[a.Txn.Version] {
							t.Fatalf("%v at write %d: batch %d committed twice", action, k, a.Txn.Version)
						}
						seen[a.Txn.Version] = true
					}
				}
			}
			checkpointed = checkpointed || len(l.Checkpoints) > 0
		}
	}
	if !checkpointed {
		t.Fatal("no run wrote a checkpoint: the crash test did not cover it")
	}
}

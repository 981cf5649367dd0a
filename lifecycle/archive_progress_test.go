package lifecycle_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ckgate/ckgate/lifecycle"
)

// TestArchiveReportsProgress: Archive calls Progress once per copied key,
// serialised, counting up to the number of keys it copies, with the total
// known from the first call.
func TestArchiveReportsProgress(t *testing.T) {
	ctx := context.Background()
	srcDir := copyDir(t, sparkAgg)
	keys := len(tree(t, srcDir))
	var mu sync.Mutex
	inside := false
	var calls [][2]int
	opts := lifecycle.ArchiveOptions{Concurrency: 4, Progress: func(done, total int) {
		mu.Lock()
		if inside {
			t.Error("Progress called concurrently")
		}
		inside = true
		mu.Unlock()
		calls = append(calls, [2]int{done, total})
		mu.Lock()
		inside = false
		mu.Unlock()
	}}
	if _, err := lifecycle.Archive(ctx, openStore(t, srcDir), openStore(t, filepath.Join(t.TempDir(), "a")), opts); err != nil {
		t.Fatal(err)
	}
	if len(calls) != keys {
		t.Fatalf("%d progress calls, want one per key (%d)", len(calls), keys)
	}
	for i, c := range calls {
		if c != [2]int{i + 1, keys} {
			t.Fatalf("call %d: done %d of %d, want %d of %d", i, c[0], c[1], i+1, keys)
		}
	}
}

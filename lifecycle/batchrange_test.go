package lifecycle_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/lifecycle"
)

const sparkV2Dedup = "../testdata/spark/checkpoint-version-4.0.0-checkpoint-v2/rocksdb/dedup"

// withCommit copies Spark's checkpoint-v2 dedup checkpoint (unique-id
// state, so retention reads the retained commits) and adds commits/<id>.
func withCommit(t *testing.T, id string) string {
	t.Helper()
	dir := copyDir(t, sparkV2Dedup)
	data, err := os.ReadFile(filepath.Join(dir, "commits", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "commits", id), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readAndPlan runs ReadListing then RetentionPlan, failing the test when they take longer
// than a few seconds (the old planner looped over every number between
// the retained commits).
func readAndPlan(t *testing.T, dir string) (*lifecycle.RetentionResult, error) {
	t.Helper()
	st := openStore(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		r   *lifecycle.RetentionResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		p := lifecycle.RetentionPolicy{MinBatches: 2, Now: time.Now()}
		l, err := lifecycle.ReadListing(ctx, st, p)
		if err != nil {
			done <- out{nil, err}
			return
		}
		r, err := lifecycle.RetentionPlan(l, p)
		done <- out{r, err}
	}()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case o := <-done:
		return o.r, o.err
	case <-timer.C:
		t.Fatal("retention read and plan did not end within 5s")
	}
	return nil, nil
}

func TestRetentionRefusesBatchIDOutOfRange(t *testing.T) {
	for _, id := range []string{"9223372036854775807", strconv.FormatInt(checkpoint.MaxBatchID+1, 10), "99999999999999999999"} {
		t.Run(id, func(t *testing.T) {
			_, err := readAndPlan(t, withCommit(t, id))
			if !errors.Is(err, checkpoint.ErrBatchRange) || !strings.Contains(err.Error(), "commits/"+id) {
				t.Fatalf("got %v, want ErrBatchRange naming commits/%s", err, id)
			}
			// RetentionPlan alone, on the listing, refuses it too.
			_, err = lifecycle.RetentionPlan(lifecycle.Listing{Objects: synth(0, "offsets/0", "commits/0", "commits/"+id)}, lifecycle.RetentionPolicy{Now: retNow})
			if !errors.Is(err, checkpoint.ErrBatchRange) || !strings.Contains(err.Error(), "commits/"+id) {
				t.Fatalf("Plan: got %v, want ErrBatchRange naming commits/%s", err, id)
			}
		})
	}
}

// The largest accepted batch id, far from the others, costs the planner
// nothing: it walks the listed commits, not the numbers between them.
func TestRetentionFarApartCommits(t *testing.T) {
	id := strconv.FormatInt(checkpoint.MaxBatchID, 10)
	r, err := readAndPlan(t, withCommit(t, id))
	if err != nil {
		t.Fatal(err)
	}
	if r.LatestCommit == nil || *r.LatestCommit != checkpoint.MaxBatchID {
		t.Fatalf("latest commit %v, want %s", r.LatestCommit, id)
	}
}

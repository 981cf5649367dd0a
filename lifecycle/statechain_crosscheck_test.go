package lifecycle_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/lifecycle"
)

// crossCheckSpec is a ckgate query whose state has several snapshot
// chains per partition (a snapshot every 2 versions).
const crossCheckSpec = `
name: crosscheck
source: {kind: rate, rows_per_second: 1000, keys: 5, start: "2026-01-01T00:00:00Z", total_rows: %d, max_rows_per_batch: 40}
event_time: timestamp
watermark: 1s
operator: {kind: %s, keys: [key]%s}
sink: {kind: noop}
partitions: 2
state: {snapshot_every: 2}
`

// crossCheckRoots returns every checkpoint root to check: each Spark
// checkpoint under testdata/spark (copied, so nothing can touch the
// originals) and ckgate checkpoints the engine writes here.
func crossCheckRoots(t *testing.T) map[string]string {
	t.Helper()
	roots := map[string]string{}
	const spark = "../testdata/spark"
	err := filepath.WalkDir(spark, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if _, err := os.Stat(filepath.Join(p, checkpoint.OffsetsDir)); err != nil {
			return nil // not a checkpoint root (a log fixture, a Kafka dump, a layout directory)
		}
		rel, _ := filepath.Rel(spark, p)
		dst := filepath.Join(t.TempDir(), "ck")
		if err := os.CopyFS(dst, os.DirFS(p)); err != nil {
			return err
		}
		roots["spark/"+filepath.ToSlash(rel)] = dst
		return filepath.SkipDir
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(roots) < 10 {
		t.Fatalf("found %d Spark checkpoints under %s, want every one", len(roots), spark)
	}
	for name, op := range map[string]string{
		"window": fmt.Sprintf(crossCheckSpec, 400, "tumbling_window", ", size: 100ms, aggregates: [count]"),
		"dedup":  fmt.Sprintf(crossCheckSpec, 400, "dedup", ""),
	} {
		ck := filepath.Join(t.TempDir(), name)
		runSpec(t, op, "file://"+ck)
		roots["ckgate/"+name] = ck
	}
	return roots
}

// TestRetentionKeepsWhatInspectNeeds: on every checkpoint in testdata and
// on ckgate's own, no file a retention plan removes (at the most
// aggressive policies) is one that inspect says a restart reads: the
// state chain of the required version of every partition (with the SSTs
// its base zip names), the latest offsets, the one before, the latest
// commit and metadata.
func TestRetentionKeepsWhatInspectNeeds(t *testing.T) {
	ctx := context.Background()
	now := time.Now().Add(365 * 24 * time.Hour)
	for name, dir := range crossCheckRoots(t) {
		t.Run(name, func(t *testing.T) {
			st := openStore(t, "file://"+dir)
			rep, err := checkpoint.Inspect(ctx, st, checkpoint.Options{})
			if err != nil {
				t.Fatal(err)
			}
			needed := map[string]string{checkpoint.MetadataKey: "metadata"}
			if l := rep.LatestOffsetsBatch; l != nil {
				needed[checkpoint.OffsetsKey(*l)] = "latest offsets"
				if *l > 0 {
					needed[checkpoint.OffsetsKey(*l-1)] = "offsets before the latest"
				}
			}
			if c := rep.LatestCommitBatch; c != nil {
				needed[checkpoint.CommitKey(*c)] = "latest commit"
			}
			chains := 0
			for _, op := range rep.Operators {
				for _, s := range op.Stores {
					for _, p := range s.Partitions {
						for _, k := range p.RebuildKeys {
							needed[k] = fmt.Sprintf("state version %d of operator %s store %s partition %d", p.RequiredVersion, op.ID, s.Name, p.ID)
							chains++
						}
					}
				}
			}
			if name == "ckgate/window" || name == "ckgate/dedup" {
				if chains == 0 {
					t.Fatalf("inspect names no state file a restart reads: %+v", rep.Operators)
				}
			}
			for _, min := range []int{1, 2, 3, lifecycle.DefaultMinBatches} {
				p := lifecycle.RetentionPolicy{MinBatches: min, Now: now, LogRetention: time.Nanosecond}
				l, err := lifecycle.ReadListing(ctx, st, p)
				if err != nil {
					t.Fatal(err)
				}
				r, err := lifecycle.RetentionPlan(l, p)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range r.Remove {
					if why, ok := needed[d.Key]; ok {
						t.Errorf("min batches %d: retention removes %s (%s), which inspect needs: %s", min, d.Key, d.Reason, why)
					}
				}
				if min == 1 && name == "ckgate/window" && len(r.Remove) == 0 {
					t.Errorf("min batches 1 removes nothing from a checkpoint of %d batches: the check proves nothing", len(rep.Batches))
				}
			}
		})
	}
}

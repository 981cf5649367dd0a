package lifecycle_test

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/lifecycle"
)

// addDirMarkers writes a directory marker for every directory of the
// checkpoint under dir, as Hadoop's mkdirs through ckgate serve leaves
// them, and returns their keys.
func addDirMarkers(t *testing.T, dir string) []string {
	t.Helper()
	var markers []string
	for rel := range tree(t, dir) {
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			k := gateway.DirMarkerKey(d)
			if !slices.Contains(markers, k) {
				markers = append(markers, k)
			}
		}
	}
	for _, k := range markers {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(k)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return markers
}

// TestRetentionAndArchiveWithDirMarkers: directory markers in a Spark
// checkpoint change no retention decision (they are kept, as files outside
// the layout), and the checkpoint archives and verifies with them.
func TestRetentionAndArchiveWithDirMarkers(t *testing.T) {
	ctx := context.Background()
	p := lifecycle.RetentionPolicy{MinBatches: 1, Now: retNow}
	for _, rel := range []string{"checkpoint-version-4.0.0/hdfs/agg", "checkpoint-version-4.0.0-checkpoint-v2/rocksdb/dedup", "checkpoint-version-2.1.0"} {
		t.Run(rel, func(t *testing.T) {
			dir := copyDir(t, "../testdata/spark/"+rel)
			plan := func() *lifecycle.RetentionResult {
				t.Helper()
				r, err := lifecycle.RetentionPlan(readPlanDir(t, dir, p), p)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			before := plan()
			markers := addDirMarkers(t, dir)
			after := plan()
			if got, want := renderRemovals(after), renderRemovals(before); !slices.Equal(got, want) {
				t.Errorf("with directory markers retention removes %q, without %q", got, want)
			}
			for _, d := range after.Keep {
				if gateway.IsDirMarker(d.Key) {
					markers = slices.DeleteFunc(markers, func(k string) bool { return k == d.Key })
				}
			}
			if len(markers) != 0 {
				t.Errorf("markers not kept: %q", markers)
			}

			dst := filepath.Join(t.TempDir(), "archive")
			src, dstStore := openStore(t, dir), openStore(t, dst)
			res, err := lifecycle.Archive(ctx, src, dstStore, lifecycle.ArchiveOptions{Source: dir, Dest: dst,
				Principal: lifecycle.Principal{ID: "alice", Kind: "housekeeping"}, Now: now})
			if err != nil {
				t.Fatalf("archive with directory markers: %v", err)
			}
			if err := lifecycle.Verify(ctx, dstStore, res.Manifest.Entries, 2); err != nil {
				t.Fatalf("verify: %v", err)
			}
			r1, err1 := checkpoint.Inspect(ctx, src, checkpoint.Options{})
			r2, err2 := checkpoint.Inspect(ctx, dstStore, checkpoint.Options{})
			if err1 != nil || err2 != nil || r1.Status != r2.Status {
				t.Fatalf("inspect source %v %v, archive %v %v", r1.Status, err1, r2.Status, err2)
			}
		})
	}
}

func renderRemovals(r *lifecycle.RetentionResult) []string {
	out := make([]string, len(r.Remove))
	for i, d := range r.Remove {
		out[i] = d.Key + ": " + d.Reason
	}
	return out
}

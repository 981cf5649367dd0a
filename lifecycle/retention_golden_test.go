package lifecycle_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/lifecycle"
)

var retUpdate = flag.Bool("update-retention", false, "rewrite the golden files in testdata/retention")

var retNow = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// render is the golden form of a plan: bounds, then one line per key.
func renderPlan(r *lifecycle.RetentionResult) string {
	var b strings.Builder
	p := func(v *int64) string {
		if v == nil {
			return "none"
		}
		return fmt.Sprint(*v)
	}
	fmt.Fprintf(&b, "latest offsets %s, latest commit %s, retain from %s; remove %d keys (%d bytes), keep %d\n",
		p(r.LatestOffsets), p(r.LatestCommit), p(r.RetainFrom), len(r.Remove), r.RemovedBytes, len(r.Keep))
	for _, d := range r.Remove {
		fmt.Fprintf(&b, "remove %s: %s\n", d.Key, d.Reason)
	}
	for _, d := range r.Keep {
		fmt.Fprintf(&b, "keep   %s: %s\n", d.Key, d.Reason)
	}
	return b.String()
}

func checkPlanGolden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("..", "testdata", "retention", name+".golden")
	if *retUpdate {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./lifecycle -run Golden -update-retention)", err)
	}
	if got != string(want) {
		t.Errorf("%s: plan differs from %s\ngot:\n%s\nwant:\n%s", name, file, got, want)
	}
}

func readPlanDir(t *testing.T, dir string, p lifecycle.RetentionPolicy) lifecycle.Listing {
	t.Helper()
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lifecycle.ReadListing(context.Background(), st, p)
	if err != nil {
		t.Fatal(err)
	}
	// The checkout's modification times are not stable.
	for i := range l.Objects {
		l.Objects[i].Modified = retNow.Add(-30 * 24 * time.Hour)
		l.Objects[i].Version = ""
	}
	return l
}

// TestPlanGoldenSpark pins the decisions on Spark's own checkpoints.
func TestPlanGoldenSpark(t *testing.T) {
	const spark = "../testdata/spark/"
	cases := []struct {
		name, dir string
		min       int
	}{
		{"4.0.0-hdfs-agg-min2", "checkpoint-version-4.0.0/hdfs/agg", 2},
		{"4.0.0-hdfs-agg-default", "checkpoint-version-4.0.0/hdfs/agg", 0},
		{"4.0.0-hdfs-join1-min1", "checkpoint-version-4.0.0/hdfs/join1", 1},
		{"4.0.0-rocksdb-agg-min2", "checkpoint-version-4.0.0/rocksdb/agg", 2},
		{"4.0.0-rocksdb-dedup-min1", "checkpoint-version-4.0.0/rocksdb/dedup", 1},
		{"4.0.0-checkpoint-v2-dedup-min1", "checkpoint-version-4.0.0-checkpoint-v2/rocksdb/dedup", 1},
		{"4.0.0-checkpoint-v2-limit-min1", "checkpoint-version-4.0.0-checkpoint-v2/rocksdb/limit", 1},
		{"2.1.0-min1", "checkpoint-version-2.1.0", 1},
		{"2.3.1-agg-state-format-1-min1", "checkpoint-version-2.3.1-streaming-aggregate-state-format-1", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := lifecycle.RetentionPolicy{MinBatches: tc.min, Now: retNow}
			l := readPlanDir(t, spark+tc.dir, p)
			r, err := lifecycle.RetentionPlan(l, p)
			if err != nil {
				t.Fatal(err)
			}
			checkPlanGolden(t, tc.name, renderPlan(r))
		})
	}
}

// TestPlanGoldenCompactedLogs pins the compacted-log rule on Spark 2.1.0's
// file sink and file source logs.
func TestPlanGoldenCompactedLogs(t *testing.T) {
	var l lifecycle.Listing
	for _, c := range []struct{ dir, prefix string }{
		{"../testdata/spark/file-sink-log-version-2.1.0", "out/_spark_metadata/"},
		{"../testdata/spark/file-source-log-version-2.1.0", "sources/0/"},
	} {
		st, err := filestore.New(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		for a, err := range st.List(context.Background(), "") {
			if err != nil {
				t.Fatal(err)
			}
			l.Objects = append(l.Objects, gateway.Attrs{Key: c.prefix + a.Key, Size: a.Size})
		}
	}
	r, err := lifecycle.RetentionPlan(l, lifecycle.RetentionPolicy{Now: retNow})
	if err != nil {
		t.Fatal(err)
	}
	checkPlanGolden(t, "compacted-logs-2.1.0", renderPlan(r))
}

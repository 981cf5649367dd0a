package lifecycle_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/checkpoint/checkpointtest"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/lifecycle"
)

// The checkpoint of the retention benchmarks (the figure): a query
// after 10,000 batches whose offsets and commits were never cleaned up, 2
// stateful operators × 8 partitions of HDFS-provider state holding the
// latest retBenchVersions versions (a snapshot every 10), and a file source
// log compacted every 10 entries. With the default policy (100 batches)
// the plan removes 9,900 × 2 log entries, the state versions below 9,900
// and the source log entries before compaction 9,899.
const (
	retBenchBatches  = 10000
	retBenchOps      = 2
	retBenchParts    = 8
	retBenchVersions = 500
)

// writeRetentionCheckpoint calls put for every file of the benchmark
// checkpoint and returns how many there are.
func writeRetentionCheckpoint(tb testing.TB, put func(key string, data []byte)) int {
	var entries []checkpoint.FileEntry
	files, err := checkpointtest.SparkHDFS{
		QueryID: "6b1f2d8e-0000-4000-8000-00000000re10",
		Batches: retBenchBatches, Versions: retBenchVersions, Ops: retBenchOps, Parts: retBenchParts,
		Delta:    []checkpoint.StateRecord{{Key: []byte("user-1"), Value: make([]byte, 24)}},
		Snapshot: []checkpoint.StateRecord{{Key: []byte("user-1"), Value: make([]byte, 24)}},
		Source:   checkpoint.EncodeFileSourceOffset,
		// The file source log of the latest 200 batches (its compactions
		// hold those entries only: the planner goes by names).
		Batch: func(n int64, put func(key string, data []byte)) error {
			if n < retBenchBatches-2*lifecycle.DefaultMinBatches {
				return nil
			}
			e := checkpoint.FileEntry{Path: fmt.Sprintf("file:///in/f-%05d.json", n), Timestamp: 1700000000000 + n, BatchID: n}
			entries = append(entries, e)
			name, log := fmt.Sprint(n), []checkpoint.FileEntry{e}
			if checkpoint.IsCompactionBatch(n, checkpoint.DefaultCompactInterval) {
				name, log = name+".compact", entries
			}
			data, err := checkpoint.EncodeFileSourceLog(log)
			if err != nil {
				return err
			}
			put("sources/0/"+name, data)
			return nil
		},
	}.Write(put)
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// benchRetention times ReadListing + RetentionPlan and then ApplyRetention of the benchmark
// checkpoint, built by build (outside the timings) for every round.
func benchRetention(b *testing.B, where, planGoal string, build func() (gateway.Store, int)) {
	ctx := context.Background()
	p := lifecycle.RetentionPolicy{Now: time.Now()}
	var readT, planT, applyT time.Duration
	deletes, rounds := 0, 0
	for b.Loop() {
		b.StopTimer()
		st, files := build()
		b.StartTimer()
		start := time.Now()
		l, err := lifecycle.ReadListing(ctx, st, p)
		if err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		r, err := lifecycle.RetentionPlan(l, p)
		if err != nil {
			b.Fatal(err)
		}
		done := time.Now()
		readT += mid.Sub(start)
		planT += done.Sub(mid)
		if len(l.Objects) != files || len(r.Remove) < 2*(retBenchBatches-lifecycle.DefaultMinBatches) {
			b.Fatalf("listed %d of %d files; the plan removes %d", len(l.Objects), files, len(r.Remove))
		}
		start = time.Now()
		res, err := lifecycle.ApplyRetention(ctx, st, r, lifecycle.RetentionApplyOptions{})
		applyT += time.Since(start)
		if err != nil || res.Deleted != len(r.Remove) {
			b.Fatalf("apply: %v, %+v of %d", err, res, len(r.Remove))
		}
		deletes += res.Deleted
		rounds++
		b.ReportMetric(float64(files), "files")
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(rounds) }
	b.ReportMetric(ms(readT), "ms/read")
	b.ReportMetric(ms(planT), "ms/plan")
	// the planner's decisions (lifecycle.RetentionPlan on the listing) against the
	// goal; list + read + plan, what `retention plan` takes end to end, is
	// recorded next to it (on the emulator it is the listing that costs)
	benchsum.Record(b, "retention_plan_10k_batches_"+where+"_ms", ms(planT), "ms", planGoal)
	benchsum.Record(b, "retention_read_plan_10k_batches_"+where+"_ms", ms(readT+planT), "ms", "")
	benchsum.Record(b, "retention_apply_10k_batches_"+where+"_deletes_per_s", float64(deletes)/applyT.Seconds(), "deletes/s", "")
}

// BenchmarkRetention10k plans (list, read, decide) and applies retention
// on the benchmark checkpoint on the local disk and on the S3 emulator
// (versitygw): the plan must take under a second; apply's throughput is
// recorded (16 deletes at once, the default).
func BenchmarkRetention10k(b *testing.B) {
	b.Run("local", func(b *testing.B) {
		benchRetention(b, "local", "<1000", func() (gateway.Store, int) {
			dir := b.TempDir()
			files := writeRetentionCheckpoint(b, func(key string, data []byte) { writeFile(b, dir, key, data) })
			st, err := filestore.New(dir)
			if err != nil {
				b.Fatal(err)
			}
			return st, files
		})
	})
	b.Run("s3", func(b *testing.B) {
		base, q, _ := strings.Cut(s3URL(b), "?")
		round := 0
		benchRetention(b, "s3", "<1000", func() (gateway.Store, int) {
			round++
			st := openStore(b, fmt.Sprintf("%s/%d?%s", base, round, q))
			files, err := checkpointtest.PutAll(b.Context(), st, 32, func(put func(key string, data []byte)) int {
				return writeRetentionCheckpoint(b, put)
			})
			if err != nil {
				b.Fatal(err)
			}
			return st, files
		})
	})
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/checkpoint/checkpointtest"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/s3store"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/internal/filetree"
)

// The checkpoint of the inspect benchmark (the figure): a Spark
// query after 10,000 batches with every offsets and commits file kept
// (retention never ran: the worst case for listing), 2 stateful operators
// × 8 partitions of HDFS-provider state holding the 100 latest versions
// (Spark's minBatchesToRetain) with a snapshot every 10 versions, and a
// Kafka source of 4 partitions.
const (
	benchBatches  = 10000
	benchOps      = 2
	benchParts    = 8
	benchVersions = 100
)

// writeBenchCheckpoint calls put for every file of the checkpoint and
// returns how many there are.
func writeBenchCheckpoint(put func(key string, data []byte)) int {
	files, err := checkpointtest.SparkHDFS{
		QueryID: "6b1f2d8e-0000-4000-8000-00000000b10c",
		Batches: benchBatches, Versions: benchVersions, Ops: benchOps, Parts: benchParts,
		Delta:    []checkpoint.StateRecord{{Key: []byte("user-1"), Value: make([]byte, 24)}, {Key: []byte("user-3"), Delete: true}},
		Snapshot: []checkpoint.StateRecord{{Key: []byte("user-1"), Value: make([]byte, 24)}, {Key: []byte("user-2"), Value: make([]byte, 24)}},
		Conf: map[string]string{checkpoint.ConfShufflePartitions: fmt.Sprint(benchParts),
			checkpoint.ConfProviderClass: "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"},
		OperatorMetadata: true,
		Source: func(n int64) string {
			return checkpoint.EncodeKafkaOffsets(map[string]map[int32]int64{"clicks": {0: n * 100, 1: n * 100, 2: n * 100, 3: n * 100}})
		},
	}.Write(put)
	if err != nil {
		panic(err)
	}
	return files
}

// checkBenchReport makes sure the command read the whole checkpoint.
func checkBenchReport(b *testing.B, out string, files int) {
	b.Helper()
	var r checkpoint.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		b.Fatal(err)
	}
	if r.Status != checkpoint.StatusClean || *r.LatestOffsetsBatch != benchBatches-1 || len(r.Operators) != benchOps || r.Files != files || !r.OK() {
		b.Fatalf("status %s operators %d files %d/%d findings %+v", r.Status, len(r.Operators), r.Files, files, r.Findings)
	}
	for _, op := range r.Operators {
		if len(op.Stores) != 1 || len(op.Stores[0].Partitions) != benchParts || !op.Stores[0].Rebuildable {
			b.Fatalf("operator %s: %+v", op.ID, op.Stores)
		}
	}
}

// benchInspect runs `ckgate inspect URL` (the table an on-call engineer
// reads) until the benchmark ends and records the time per run.
func benchInspect(b *testing.B, opts Options, raw string, files int, name, goal string) {
	var out, errOut bytes.Buffer
	opts.Stdout, opts.Stderr = &out, &errOut
	if code := Run(context.Background(), opts, []string{"ckgate", "inspect", "--format", "json", raw}); code != 0 {
		b.Fatalf("inspect: exit %d: %s", code, errOut.String())
	}
	checkBenchReport(b, out.String(), files)
	var took time.Duration
	runs := 0
	for b.Loop() {
		out.Reset()
		start := time.Now()
		if code := Run(context.Background(), opts, []string{"ckgate", "inspect", raw}); code != 0 {
			b.Fatalf("inspect: exit %d: %s", code, errOut.String())
		}
		took += time.Since(start)
		runs++
	}
	if !strings.Contains(out.String(), "yes (8/8)") {
		b.Fatalf("table:\n%s", out.String())
	}
	ms := float64(took.Microseconds()) / 1000 / float64(runs)
	b.ReportMetric(ms, "ms/inspect")
	b.ReportMetric(float64(files), "files")
	benchsum.Record(b, name, ms, "ms", goal)
}

func BenchmarkInspect10k(b *testing.B) {
	b.Run("local", func(b *testing.B) {
		dir := b.TempDir()
		files := writeBenchCheckpoint(func(key string, data []byte) {
			if err := filetree.WriteFile(dir, key, data); err != nil {
				b.Fatal(err)
			}
		})
		benchInspect(b, Options{}, dir, files, "inspect_cli_10k_local_ms", "<1000")
	})
	b.Run("s3", func(b *testing.B) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		emu := emulator.Versitygw(b)
		q := s3Query(emu, emu.Endpoint).Encode()
		raw := "s3://ckgate-bench-inspect/team/q1?" + q
		u, err := url.Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		st, err := s3store.Open(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		defer gateway.Close(st)
		if err := gateway.MakeBucket(ctx, st); err != nil {
			b.Fatal(err)
		}
		files, err := checkpointtest.PutAll(ctx, st, 32, writeBenchCheckpoint)
		if err != nil {
			b.Fatal(err)
		}
		benchInspect(b, Options{}, raw, files, "inspect_cli_10k_s3_ms", "<3000")
	})
}

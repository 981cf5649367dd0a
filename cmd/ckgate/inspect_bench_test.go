package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/s3store"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/internal/emulator"
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

// writeBenchCheckpoint calls put for every file of the checkpoint (it
// mirrors engine/checkpoint's test builder, which cannot be imported).
func writeBenchCheckpoint(put func(key string, data []byte)) int {
	files := 0
	w := func(key string, data []byte, err error) {
		if err != nil {
			panic(err)
		}
		put(key, data)
		files++
	}
	w(checkpoint.MetadataKey, checkpoint.StreamMetadata{ID: "6b1f2d8e-0000-4000-8000-00000000b10c"}.Encode(), nil)
	conf := map[string]string{checkpoint.ConfShufflePartitions: fmt.Sprint(benchParts),
		checkpoint.ConfProviderClass: "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"}
	for op := range benchOps {
		m := checkpoint.OperatorMetadata{OperatorID: int64(op), OperatorName: "stateStoreSave",
			Stores: []checkpoint.StoreMetadata{{Name: checkpoint.DefaultStore, NumPartitions: benchParts}}}
		data, err := m.Encode()
		w(checkpoint.OperatorMetadataKey(fmt.Sprint(op)), data, err)
	}
	delta := checkpoint.EncodeDelta([]checkpoint.StateRecord{{Key: []byte("user-1"), Value: make([]byte, 24)}, {Key: []byte("user-3"), Delete: true}})
	snap, err := checkpoint.EncodeSnapshot([]checkpoint.StateRecord{{Key: []byte("user-1"), Value: make([]byte, 24)}, {Key: []byte("user-2"), Value: make([]byte, 24)}})
	if err != nil {
		panic(err)
	}
	for n := int64(0); n < benchBatches; n++ {
		seq := checkpoint.OffsetSeq{Metadata: &checkpoint.OffsetSeqMetadata{BatchWatermarkMs: n * 1000, BatchTimestampMs: 1700000000000 + n*1000, Conf: conf},
			Sources: []checkpoint.OffsetEntry{{JSON: checkpoint.EncodeKafkaOffsets(map[string]map[int32]int64{"clicks": {0: n * 100, 1: n * 100, 2: n * 100, 3: n * 100}}), Present: true}}}
		data, err := seq.Encode()
		w(checkpoint.OffsetsKey(n), data, err)
		data, err = checkpoint.CommitMetadata{NextBatchWatermarkMs: n*1000 + 500}.Encode()
		w(checkpoint.CommitKey(n), data, err)
		v := n + 1 // batch n writes state version n+1
		if v <= benchBatches-benchVersions {
			continue
		}
		for op := range benchOps {
			for part := range benchParts {
				dir := checkpoint.StoreDirKey(fmt.Sprint(op), part, checkpoint.DefaultStore)
				w(fmt.Sprintf("%s/%d.delta", dir, v), delta, nil)
				if v%10 == 0 {
					w(fmt.Sprintf("%s/%d.snapshot", dir, v), snap, nil)
				}
			}
		}
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
			p := filepath.Join(dir, filepath.FromSlash(key))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
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
		files := putParallel(b, ctx, st, 32)
		benchInspect(b, Options{}, raw, files, "inspect_cli_10k_s3_ms", "<3000")
	})
}

// putParallel uploads the benchmark checkpoint with n writers.
func putParallel(b *testing.B, ctx context.Context, st gateway.Store, n int) int {
	type obj struct {
		key  string
		data []byte
	}
	ch := make(chan obj)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range n {
		wg.Go(func() {
			for o := range ch {
				if _, err := st.Put(ctx, o.key, o.data, gateway.None()); err != nil {
					once.Do(func() { firstErr = fmt.Errorf("put %s: %w", o.key, err) })
				}
			}
		})
	}
	files := writeBenchCheckpoint(func(key string, data []byte) { ch <- obj{key, data} })
	close(ch)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	return files
}

package checkpoint

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/internal/filetree"
)

// The ckgate checkpoint of the benchmark: 10,000 batches, every offsets
// and commits file kept (retention never ran: the worst case for listing),
// 2 operators × 8 partitions of ckgate engine state (CKGS files naming
// their base, a snapshot every 10 versions, commits naming each
// partition's tip), keeping the last keepVersions versions (all when 0).
const (
	benchBatches = 10000
	benchOps     = 2
	benchParts   = 8
)

// writeBenchCheckpoint calls write for every file of the checkpoint.
func writeBenchCheckpoint(keepVersions int64, write func(key string, data []byte)) {
	write(MetadataKey, StreamMetadata{ID: "6b1f2d8e-0000-4000-8000-00000000b10c"}.Encode())
	now := time.Now()
	write(gateway.WriterKey, gateway.WriterRecord{Epoch: 4, QueryID: "6b1f2d8e-0000-4000-8000-00000000b10c", Owner: "bench:1", Host: "bench", PID: 1,
		Since: now, Heartbeat: now.Add(-time.Hour), LeaseMs: 30000, WriteID: "w"}.Encode())
	write(PlanKey, []byte(`{"version":1,"fingerprint":"sha256:bench","sink":{"kind":"files"}}`))
	conf := map[string]string{ConfShufflePartitions: fmt.Sprint(benchParts), ConfCompressionCodec: "lz4"}
	for op := range benchOps {
		m := OperatorMetadata{OperatorID: int64(op), OperatorName: "sessionWindowStateStoreSave", Stores: []StoreMetadata{{Name: DefaultStore, NumPartitions: benchParts}}}
		write(OperatorMetadataKey(fmt.Sprint(op)), must(m.Encode()))
	}
	tips := make([]string, benchOps*benchParts)
	for n := int64(0); n < benchBatches; n++ {
		seq := OffsetSeq{Metadata: &OffsetSeqMetadata{BatchWatermarkMs: n * 1000, BatchTimestampMs: 1700000000000 + n*1000, Conf: conf, Epoch: 4},
			Sources: []OffsetEntry{{JSON: EncodeKafkaOffsets(map[string]map[int32]int64{"clicks": {0: n * 100, 1: n * 100, 2: n * 100, 3: n * 100}}), Present: true}}}
		write(OffsetsKey(n), must(seq.Encode()))
		ids := map[int64][][]string{}
		v := n + 1
		for op := range benchOps {
			for part := range benchParts {
				i := op*benchParts + part
				snap := v%10 == 5 || tips[i] == ""
				name := StateFileName{Version: v, UniqueID: fmt.Sprintf("%012x", v<<8|int64(i)), Kind: KindDelta}
				h := CkgateStateHeader{Version: v, Base: tips[i]}
				recs := []StateRecord{{Key: []byte("user-1"), Value: make([]byte, 24)}, {Key: []byte("user-2"), Value: make([]byte, 24)}, {Key: []byte("user-3"), Delete: true}}
				if snap {
					name.Kind, h = KindSnapshot, CkgateStateHeader{Snapshot: true, Version: v}
					recs = recs[:2]
				}
				tips[i] = name.String()
				ids[int64(op)] = append(ids[int64(op)], []string{tips[i]})
				if keepVersions > 0 && v <= benchBatches-keepVersions {
					continue
				}
				write(StoreDirKey(fmt.Sprint(op), part, DefaultStore)+"/"+name.String(), encodeCkgateState(h, recs))
			}
		}
		write(CommitKey(n), must(CommitMetadata{NextBatchWatermarkMs: n*1000 + 500, StateUniqueIDs: ids, Epoch: 4}.Encode()))
	}
}

func BenchmarkInspect10k(b *testing.B) {
	check := func(b *testing.B, r *Report, files int) {
		if r.Status != StatusClean || *r.LatestOffsetsBatch != benchBatches-1 || len(r.Operators) != benchOps || r.Files != files || !r.OK() {
			b.Fatalf("status %s L %s operators %d files %d/%d findings %+v", r.Status, fmtPtr(r.LatestOffsetsBatch), len(r.Operators), r.Files, files, r.Findings)
		}
		for _, op := range r.Operators {
			for _, p := range op.Stores[0].Partitions {
				if !p.Rebuildable || *p.RebuildFrom != benchBatches-5 || p.RebuildFiles != 6 {
					b.Fatalf("partition %+v", p)
				}
			}
		}
	}
	// On the local disk, with the state retention Spark applies (100
	// versions); the fixture is written with os.WriteFile (no fsync) and
	// read through filestore.
	b.Run("filestore", func(b *testing.B) {
		dir := b.TempDir()
		files := 0
		writeBenchCheckpoint(100, func(key string, data []byte) {
			if err := filetree.WriteFile(dir, key, data); err != nil {
				b.Fatal(err)
			}
			files++
		})
		st, err := filestore.New(dir)
		if err != nil {
			b.Fatal(err)
		}
		var r *Report
		for b.Loop() {
			if r, err = Inspect(context.Background(), st, Options{}); err != nil {
				b.Fatal(err)
			}
		}
		check(b, r, files)
		b.ReportMetric(float64(files), "files")
	})
	// In memory, with every state version kept (176,000 state files).
	b.Run("memstore-all-versions", func(b *testing.B) {
		ms := memstore.New()
		files := 0
		writeBenchCheckpoint(0, func(key string, data []byte) {
			if _, err := ms.Put(context.Background(), key, data, gateway.None()); err != nil {
				b.Fatal(err)
			}
			files++
		})
		var r *Report
		var err error
		for b.Loop() {
			if r, err = Inspect(context.Background(), ms, Options{}); err != nil {
				b.Fatal(err)
			}
		}
		check(b, r, files)
		b.ReportMetric(float64(files), "files")
	})
}

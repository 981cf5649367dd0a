package checkpoint_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/checkpoint/corrupttest"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/internal/filetree"
)

// sparkCorpus are the real Spark checkpoints the corrupt corpus is derived
// from: HDFS and RocksDB state, with and without a commit log, Kafka.
var sparkCorpus = []string{
	"checkpoint-version-2.1.0",
	"checkpoint-version-3.3.0-streaming-deduplication",
	"checkpoint-version-4.0.0/hdfs/agg",
	"checkpoint-version-4.0.0/rocksdb/dedup",
	"checkpoint-version-4.0.0-checkpoint-v2/rocksdb/dedup",
	"kafka/checkpoint-version-2.4.3-kafka-include-headers-default",
}

func readTree(t *testing.T, rel string) corrupttest.Files {
	t.Helper()
	files, err := filetree.Read(filepath.Join("../../testdata/spark", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return corrupttest.Files(files)
}

// TestCorruptSparkCheckpoints: for every corruption of real Spark
// checkpoints, Inspect reports a finding about the key at fault with a
// next step, an error exactly when a restart would fail.
func TestCorruptSparkCheckpoints(t *testing.T) {
	ctx := context.Background()
	total := 0
	for _, rel := range sparkCorpus {
		clean := readTree(t, rel)
		cases := corrupttest.Cases(clean)
		total += len(cases)
		t.Run(rel, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.Name, func(t *testing.T) {
					bad := clean.Clone()
					tc.Apply(bad)
					ms := memstore.New()
					for _, k := range slices.Sorted(maps.Keys(bad)) {
						if _, err := ms.Put(ctx, k, bad[k], gateway.None()); err != nil {
							t.Fatal(err)
						}
					}
					rep, err := checkpoint.Inspect(ctx, ms, checkpoint.Options{})
					if err != nil {
						t.Fatal(err)
					}
					i := slices.IndexFunc(rep.Findings, func(f checkpoint.Finding) bool {
						return f.Key == tc.Key && slices.Contains(tc.Findings, f.ID)
					})
					if i < 0 {
						t.Fatalf("no %v finding about %s: %+v", tc.Findings, tc.Key, rep.Findings)
					}
					f := rep.Findings[i]
					want := checkpoint.SeverityWarning
					if tc.Fatal {
						want = checkpoint.SeverityError
					}
					if f.Severity != want || f.Next == "" || f.Message == "" {
						t.Errorf("finding %+v: want severity %s, a message and a next step", f, want)
					}
					if rep.OK() == tc.Fatal {
						t.Errorf("OK=%v for fatal=%v: status %s, findings %+v", rep.OK(), tc.Fatal, rep.Status, rep.Findings)
					}
				})
			}
		})
	}
	t.Logf("%d corrupt cases from %d Spark checkpoints", total, len(sparkCorpus))
}

package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// Synthetic checkpoints built in memory, then damaged.

type scenario struct {
	name     string
	build    func(t *testing.T) *builder
	opts     Options
	status   Status
	problems []string // exactly these error and warning findings
	infos    []string // at least these info findings
	check    func(t *testing.T, r *Report)
}

// base: 5 committed batches, 2 operators × 3 partitions, a snapshot every
// 2 versions, Hadoop .crc sidecars.
func base(t *testing.T) *builder {
	b := newBuilder(t)
	b.crc = true
	return b.start().batches(5)
}

func TestInspectScenarios(t *testing.T) {
	scenarios := []scenario{
		{
			name: "clean", build: base, status: StatusClean,
			check: func(t *testing.T, r *Report) {
				if !eqPtr(r.LatestOffsetsBatch, i64(4)) || !eqPtr(r.LatestCommitBatch, i64(4)) || !eqPtr(r.WatermarkMs, i64(4500)) {
					t.Errorf("L %s C %s wm %s", fmtPtr(r.LatestOffsetsBatch), fmtPtr(r.LatestCommitBatch), fmtPtr(r.WatermarkMs))
				}
				if r.Resume == nil || r.Resume.NextBatch != 5 || r.Resume.Rerun || r.Resume.StateVersion != 5 {
					t.Errorf("resume %+v", r.Resume)
				}
				if len(r.Batches) != 5 || r.Batches[4].ID != 4 || !r.Batches[4].Committed || *r.Batches[4].NextWatermarkMs != 4500 {
					t.Fatalf("batches %+v", r.Batches)
				}
				k := r.Batches[4].Offsets[0]
				if k.Kind != OffsetKafka || !slices.Equal(k.Kafka, []KafkaPartitionOffset{{"clicks", 0, 40}, {"clicks", 1, 80}}) {
					t.Errorf("batch 4 offsets %+v", k)
				}
				for _, op := range r.Operators {
					if op.Name != "stateStoreSave" || op.NumPartitions != 3 || len(op.Stores) != 1 {
						t.Errorf("operator %+v", op)
					}
					for _, p := range op.Stores[0].Partitions {
						// version 5 = snapshot 4 + 5.delta
						if !p.Rebuildable || *p.RebuildFrom != 4 || p.RebuildFiles != 2 || p.Snapshots != 2 || !slices.Equal(p.Versions, []Range{{1, 5}}) {
							t.Errorf("partition %+v", p)
						}
						d := detail(t, &p, 5, KindDelta)
						if *d.Puts != 1 || *d.Deletes != 1 {
							t.Errorf("5.delta: %d puts %d deletes, want 1 and 1", *d.Puts, *d.Deletes)
						}
					}
				}
				if !r.OK() || r.StateBytes <= 0 || r.TotalBytes <= r.StateBytes || r.Files == 0 {
					t.Errorf("OK %v state %d total %d files %d", r.OK(), r.StateBytes, r.TotalBytes, r.Files)
				}
			},
		},
		{
			name: "in flight with a partly written next version",
			build: func(t *testing.T) *builder {
				b := base(t)
				b.batch(5, false)
				b.stateFile(0, 0, 7, KindDelta, nil) // an attempt of batch 6? no offsets: newer than commit
				return b
			},
			status:   StatusInFlight,
			problems: []string{"warning state-newer-than-commit state/0/0/6.delta"}, // versions 6 and 7
			check: func(t *testing.T, r *Report) {
				if r.Resume == nil || r.Resume.NextBatch != 5 || !r.Resume.Rerun || r.Resume.StateVersion != 5 || !eqPtr(r.WatermarkMs, i64(5000)) {
					t.Errorf("resume %+v wm %s", r.Resume, fmtPtr(r.WatermarkMs))
				}
				if !strings.Contains(r.Resume.Note, "Kafka and foreach sinks") {
					t.Errorf("note %q says nothing about the sinks", r.Resume.Note)
				}
				// version 6 was written by the in-flight batch: info only
				if !hasFinding(r, SeverityInfo, FindingStateNewerThanCommit, "state/1/2/6.delta") {
					t.Errorf("findings %+v", r.Findings)
				}
			},
		},
		{
			name:     "offsets/L cut in its JSON",
			build:    func(t *testing.T) *builder { b := base(t); b.put("offsets/4", b.get("offsets/4")[:30]); return b },
			status:   StatusInconsistent,
			problems: []string{"error truncated offsets/4"},
		},
		{
			name:     "offsets/L without its metadata line",
			build:    func(t *testing.T) *builder { b := base(t); b.put("offsets/4", []byte("v1")); return b },
			status:   StatusInconsistent,
			problems: []string{"error truncated offsets/4"},
		},
		{
			name:     "zero-byte commits/C",
			build:    func(t *testing.T) *builder { b := base(t); b.put("commits/4", nil); return b },
			status:   StatusInconsistent,
			problems: []string{"error zero-byte commits/4"},
		},
		{
			name: "offsets v99",
			build: func(t *testing.T) *builder {
				b := base(t)
				b.put("offsets/4", []byte("v99\n{\"batchWatermarkMs\":0}\n1"))
				return b
			},
			status:   StatusInconsistent,
			problems: []string{"error unsupported-version offsets/4"},
			check: func(t *testing.T, r *Report) {
				for _, f := range r.Findings {
					if f.ID == FindingUnsupportedVersion && (!strings.Contains(f.Message, "v99") || !strings.Contains(f.Message, "highest understood: v2")) {
						t.Errorf("message %q must name v99 and v2", f.Message)
					}
				}
			},
		},
		{
			name:     "commit v99",
			build:    func(t *testing.T) *builder { b := base(t); b.put("commits/4", []byte("v99\n{}")); return b },
			status:   StatusInconsistent,
			problems: []string{"error unsupported-version commits/4"},
		},
		{
			name:     "an old offsets entry is corrupt",
			build:    func(t *testing.T) *builder { b := base(t); b.put("offsets/1", []byte("v1\n{")); return b },
			status:   StatusClean,
			problems: []string{"warning truncated offsets/1"},
		},
		{
			name: "checksum mismatch",
			build: func(t *testing.T) *builder {
				b := base(t)
				put(t, b.st, "offsets/4", append(b.get("offsets/4"), '\n')) // still valid, the sidecar is stale
				return b
			},
			status:   StatusClean,
			problems: []string{"warning checksum-mismatch offsets/4"},
		},
		{
			name: "leftover temp files",
			build: func(t *testing.T) *builder {
				b := base(t)
				put(t, b.st, "offsets/.5.8d2f6c1e-5b1e-4d3c-9a57-0c1f2e3d4c5b.tmp", []byte("v1\n"))
				put(t, b.st, "state/0/1/.6.delta.1d2c3b4a-0000-4000-8000-000000000000.TID12.tmp", []byte("LZ4"))
				put(t, b.st, ".metadata.0f0e0d0c-0000-4000-8000-000000000000.tmp", nil)
				return b
			},
			status: StatusClean,
			problems: []string{
				"warning temp-file .metadata.0f0e0d0c-0000-4000-8000-000000000000.tmp",
				"warning temp-file offsets/.5.8d2f6c1e-5b1e-4d3c-9a57-0c1f2e3d4c5b.tmp",
				"warning temp-file state/0/1/.6.delta.1d2c3b4a-0000-4000-8000-000000000000.TID12.tmp",
			},
		},
		{
			name: "a delta of the rebuild chain has a bad lz4 checksum",
			build: func(t *testing.T) *builder {
				b := base(t)
				d := b.get("state/1/2/5.delta")
				d[len(d)-22] ^= 0xFF // the block's last data byte
				put(t, b.st, "state/1/2/5.delta", d)
				return b
			},
			status:   StatusClean,
			problems: []string{"error corrupt state/1/2/5.delta", "error state-unrebuildable state/1/2", "warning checksum-mismatch state/1/2/5.delta"},
		},
		{
			name: "a truncated snapshot",
			build: func(t *testing.T) *builder {
				b := base(t)
				b.put("state/0/0/4.snapshot", b.get("state/0/0/4.snapshot")[:40])
				return b
			},
			status:   StatusClean,
			problems: []string{"error truncated state/0/0/4.snapshot", "error state-unrebuildable state/0/0"},
		},
		{
			name:     "a missing delta",
			build:    func(t *testing.T) *builder { b := base(t); del(t, b.st, "state/0/1/5.delta"); return b },
			status:   StatusClean,
			problems: []string{"error state-unrebuildable state/0/1"},
			infos:    []string{"info orphan-checksum state/0/1/.5.delta.crc"},
			check: func(t *testing.T, r *Report) {
				p := store(t, operator(t, r, "0"), "default").Partitions[1]
				if p.Rebuildable || !strings.Contains(p.Problem, "version 5 has no delta/changelog file (rebuilding 5 from snapshot 4)") {
					t.Errorf("problem %q", p.Problem)
				}
			},
		},
		{
			name: "no snapshot: rebuilt from the empty state",
			build: func(t *testing.T) *builder {
				b := newBuilder(t)
				b.snapshotEvery = 0
				return b.start().batches(5)
			},
			status: StatusClean,
			check: func(t *testing.T, r *Report) {
				p := store(t, operator(t, r, "1"), "default").Partitions[2]
				if !p.Rebuildable || *p.RebuildFrom != 0 || p.RebuildFiles != 5 {
					t.Errorf("partition %+v", p)
				}
			},
		},
		{
			name: "a missing partition",
			build: func(t *testing.T) *builder {
				b := base(t)
				for a, err := range b.st.List(t0ctx, "state/1/2/") {
					if err != nil {
						t.Fatal(err)
					}
					del(t, b.st, a.Key)
				}
				return b
			},
			status:   StatusClean,
			problems: []string{"error state-partition-missing state/1/2"},
			check: func(t *testing.T, r *Report) {
				if store(t, operator(t, r, "1"), "default").Rebuildable {
					t.Error("store with a missing partition is not rebuildable")
				}
			},
		},
		{
			name: "commits ahead of offsets",
			build: func(t *testing.T) *builder {
				b := base(t)
				b.put("commits/5", must(CommitMetadata{}.Encode()))
				return b
			},
			status:   StatusInconsistent,
			problems: []string{"error commits-ahead commits/5"},
		},
		{
			name: "commits behind",
			build: func(t *testing.T) *builder {
				b := base(t)
				del(t, b.st, "commits/3")
				del(t, b.st, "commits/4")
				return b
			},
			status: StatusInFlight,
			// C = 2: batch 4 is re-run, loading version 4 (snapshot 4); version 5
			// was written by that in-flight batch
			problems: []string{"warning commits-behind commits/2"},
			infos:    []string{"info orphan-checksum commits/.3.crc", "info state-newer-than-commit state/1/2/5.delta"},
		},
		{
			name:     "an offsets gap below the latest",
			build:    func(t *testing.T) *builder { b := base(t); del(t, b.st, "offsets/1"); return b },
			status:   StatusClean,
			problems: []string{"warning offsets-gap offsets/1", "warning commit-without-offsets commits/1"},
		},
		{
			name:     "metadata missing (SPARK-55058)",
			build:    func(t *testing.T) *builder { b := base(t); del(t, b.st, "metadata"); return b },
			status:   StatusInconsistent,
			problems: []string{"error metadata-missing metadata"},
		},
		{
			name:     "metadata corrupt",
			build:    func(t *testing.T) *builder { b := base(t); b.put("metadata", []byte(`{"id":`)); return b },
			status:   StatusInconsistent,
			problems: []string{"error truncated metadata"},
		},
		{
			name: "state without offsets",
			build: func(t *testing.T) *builder {
				b := newBuilder(t).start().batches(2)
				for _, k := range []string{"offsets/0", "offsets/1", "commits/0", "commits/1"} {
					del(t, b.st, k)
				}
				return b
			},
			status:   StatusInconsistent,
			problems: []string{"error state-without-offsets state"},
		},
		{
			name:   "empty",
			build:  func(t *testing.T) *builder { b := newBuilder(t); b.ops = 0; return b.start() },
			status: StatusEmpty,
			check: func(t *testing.T, r *Report) {
				if r.Resume == nil || r.Resume.NextBatch != 0 || r.LatestOffsetsBatch != nil || r.WatermarkMs != nil {
					t.Errorf("resume %+v L %s", r.Resume, fmtPtr(r.LatestOffsetsBatch))
				}
			},
		},
		{
			name: "ckgate writer, live, with a plan",
			build: func(t *testing.T) *builder {
				b := newBuilder(t).writer(3, time.Now()).start().batches(3)
				b.batch(3, false)
				put(t, b.st, PlanKey, []byte(`{"version":1,"fingerprint":"sha256:abc","sink":{"kind":"files","path":"out"},"source":{"kind":"kafka"}}`))
				return b
			},
			status: StatusInFlight,
			infos:  []string{"info writer-live _ckgate/writer"},
			check: func(t *testing.T, r *Report) {
				w := r.Writer
				if w.Kind != WriterCkgate || w.Epoch != 3 || w.Owner != "host-a:4242" || !w.Live || !w.Plan || w.PlanFingerprint != "sha256:abc" || w.SinkKind != "files" {
					t.Errorf("writer %+v", w)
				}
				if !strings.Contains(r.Resume.Note, "idempotent") {
					t.Errorf("note %q", r.Resume.Note)
				}
				if r.Batches[3].Epoch != 3 || r.Batches[2].Epoch != 3 {
					t.Errorf("batch epochs %d %d, want 3", r.Batches[2].Epoch, r.Batches[3].Epoch)
				}
			},
		},
		{
			// A plan run would refuse (no version) is a finding, not a
			// clean report: inspect reads it with run's reader.
			name: "ckgate writer, plan without a version",
			build: func(t *testing.T) *builder {
				b := newBuilder(t).writer(3, time.Now()).start().batches(3)
				b.batch(3, false)
				put(t, b.st, PlanKey, []byte(`{"fingerprint":"sha256:abc","sink":{"kind":"files","path":"out"}}`))
				return b
			},
			status:   StatusInFlight,
			problems: []string{"error corrupt _ckgate/plan.json"},
			infos:    []string{"info writer-live _ckgate/writer"},
		},
		{
			name: "ckgate writer record corrupt",
			build: func(t *testing.T) *builder {
				b := newBuilder(t).start().batches(1)
				put(t, b.st, gateway.WriterKey, []byte(`{"epoch":0}`))
				return b
			},
			status:   StatusClean,
			problems: []string{"error corrupt _ckgate/writer"},
			check: func(t *testing.T, r *Report) {
				if r.Writer.Kind != WriterCkgate || r.OK() {
					t.Errorf("writer %+v OK %v", r.Writer, r.OK())
				}
			},
		},
		{
			name: "unique ids named by commits, with a failed attempt",
			build: func(t *testing.T) *builder {
				b := newBuilder(t)
				b.uids = true
				b.start().batches(5)
				put(t, b.st, "state/0/0/5_ffffffff-dead-4000-8000-000000000000.delta", EncodeDelta(nil)) // a fenced zombie's attempt
				return b
			},
			status: StatusClean,
			infos:  []string{"info state-uncommitted state/0/0/5_ffffffff-dead-4000-8000-000000000000.delta"},
			check: func(t *testing.T, r *Report) {
				p := store(t, operator(t, r, "0"), "default").Partitions[0]
				if !p.Rebuildable || *p.RebuildFrom != 4 || p.RebuildFiles != 2 || r.Format.CheckpointFormat != 2 {
					t.Errorf("partition %+v format %+v", p, r.Format)
				}
			},
		},
		{
			name: "unique ids: the committed file is missing",
			build: func(t *testing.T) *builder {
				b := newBuilder(t)
				b.uids = true
				b.start().batches(5)
				del(t, b.st, b.stateKey(1, 1, 5, KindDelta))
				return b
			},
			status:   StatusClean,
			problems: []string{"error state-unrebuildable state/1/1"},
			check: func(t *testing.T, r *Report) {
				p := store(t, operator(t, r, "1"), "default").Partitions[1]
				if !strings.Contains(p.Problem, "named by commits/4") {
					t.Errorf("problem %q", p.Problem)
				}
			},
		},
		{
			name: "Spark 4.1 checksum file mismatch in the chain",
			build: func(t *testing.T) *builder {
				b := base(t)
				put(t, b.st, "state/0/2/5.delta.crc", []byte(`{"algorithm":"CRC32C","value":12345,"mainFileSize":1,"timestampMs":1}`))
				good := b.get("state/0/2/4.snapshot")
				sum := castagnoliSum(good)
				put(t, b.st, "state/0/2/4.snapshot.crc", fmt.Appendf(nil, `{"algorithm":"CRC32C","value":%d,"mainFileSize":%d}`, sum, len(good)))
				return b
			},
			status:   StatusClean,
			problems: []string{"error checksum-mismatch state/0/2/5.delta", "error state-unrebuildable state/0/2"},
		},
		{
			name: "an unsupported state codec",
			build: func(t *testing.T) *builder {
				b := newBuilder(t)
				b.ops, b.parts, b.snapshotEvery = 1, 1, 0
				b.conf[ConfCompressionCodec] = "zstd"
				b.start().batches(2)
				for v := int64(1); v <= 2; v++ {
					put(t, b.st, b.stateKey(0, 0, v, KindDelta), []byte("\x28\xb5\x2f\xfd zstd frame"))
				}
				return b
			},
			status:   StatusClean,
			problems: []string{"warning unsupported-codec state/0"},
			check: func(t *testing.T, r *Report) {
				p := store(t, operator(t, r, "0"), "default").Partitions[0]
				if !p.Rebuildable || p.Details[0].Puts != nil {
					t.Errorf("partition %+v", p)
				}
			},
		},
		{
			name: "RocksDB zip naming a missing SST",
			build: func(t *testing.T) *builder {
				b := newBuilder(t)
				b.ops, b.parts, b.snapshotEvery = 1, 2, 0
				b.conf[ConfProviderClass] = sparkProvider + "RocksDBStateStoreProvider"
				b.start()
				for n := range int64(2) {
					b.put(OffsetsKey(n), must(OffsetSeq{Metadata: &OffsetSeqMetadata{Conf: b.conf}, Sources: []OffsetEntry{{JSON: "1", Present: true}}}.Encode()))
					b.put(CommitKey(n), must(CommitMetadata{}.Encode()))
				}
				for part := range 2 {
					dir := StoreDirKey("0", part, DefaultStore)
					put(t, b.st, dir+"/1.changelog", changelogV1(3))
					put(t, b.st, dir+"/2.changelog", changelogV1(1))
					put(t, b.st, dir+"/2.zip", rocksZip(t, map[string]int64{"000008-aaaa.sst": 5}))
				}
				put(t, b.st, "state/0/0/SSTs/000008-aaaa.sst", []byte("12345"))
				return b
			},
			status:   StatusClean,
			problems: []string{"error state-unrebuildable state/0/1"},
			check: func(t *testing.T, r *Report) {
				op := operator(t, r, "0")
				p0, p1 := op.Stores[0].Partitions[0], op.Stores[0].Partitions[1]
				if op.Provider != ProviderRocksDB || !p0.Rebuildable || *p0.RebuildFrom != 2 || !strings.Contains(p1.Problem, "SSTs/000008-aaaa.sst") {
					t.Errorf("p0 %+v\np1 %+v", p0, p1)
				}
				if d := detail(t, &p0, 1, KindChangelog); *d.Puts != 3 || d.Changelog != 1 {
					t.Errorf("1.changelog %+v", d)
				}
			},
		},
		{
			name:   "a single batch detailed",
			build:  base,
			opts:   Options{Batch: i64(2)},
			status: StatusClean,
			check: func(t *testing.T, r *Report) {
				if len(r.Batches) != 1 || r.Batches[0].ID != 2 || *r.Batches[0].WatermarkMs != 2000 {
					t.Errorf("batches %+v", r.Batches)
				}
			},
		},
		{
			name: "verify every checksum",
			build: func(t *testing.T) *builder {
				b := base(t)
				put(t, b.st, "state/1/1/1.delta", EncodeDelta(nil))
				return b
			},
			opts:   Options{VerifyAllChecksums: true, MaxStateVersions: 1},
			status: StatusClean,
			// 1.delta is neither in the chain nor among the latest versions
			problems: []string{"warning checksum-mismatch state/1/1/1.delta"},
		},
		{
			name: "an orphan checksum",
			build: func(t *testing.T) *builder {
				b := base(t)
				put(t, b.st, "offsets/.9.crc", EncodeHadoopCRC(nil))
				return b
			},
			status: StatusClean,
			infos:  []string{"info orphan-checksum offsets/.9.crc"},
		},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			b := sc.build(t)
			r := inspect(t, b.st, sc.opts)
			if r.Status != sc.status {
				t.Errorf("status %s, want %s", r.Status, sc.status)
			}
			got, want := findingsOf(r, SeverityWarning), slices.Clone(sc.problems)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("error/warning findings:\n got %q\nwant %q", got, want)
			}
			infos := findingsOf(r, SeverityInfo)
			for _, w := range sc.infos {
				if !slices.Contains(infos, w) {
					t.Errorf("missing %q in %q", w, infos)
				}
			}
			for _, f := range r.Findings {
				if f.Key == "" || f.Message == "" || f.ID == "" {
					t.Errorf("incomplete finding %+v", f)
				}
			}
			if _, err := json.Marshal(r); err != nil {
				t.Fatal(err)
			}
			if sc.check != nil {
				sc.check(t, r)
			}
		})
	}
}

func TestInspectJSONShape(t *testing.T) {
	r := inspect(t, base(t).st, Options{})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"query_id", "writer", "status", "latest_offsets_batch", "latest_commit_batch", "watermark_ms", "confs", "batches", "sources", "operators", "findings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	var f []map[string]any
	r.Findings = []Finding{{ID: "x", Severity: SeverityInfo, Key: "k", Message: "m"}}
	b, _ = json.Marshal(r.Findings)
	json.Unmarshal(b, &f)
	if fmt.Sprint(f) != "[map[id:x key:k message:m severity:info]]" {
		t.Errorf("finding JSON %s", b)
	}
}

func TestInspectNotACheckpoint(t *testing.T) {
	ms := memstore.New()
	if _, err := Inspect(context.Background(), ms, Options{}); !errors.Is(err, ErrNotCheckpoint) {
		t.Errorf("empty store: %v", err)
	}
	put(t, ms, "data/part-0000.json", []byte("{}"))
	put(t, ms, "sources/0/0", []byte("v1\n"))
	if _, err := Inspect(context.Background(), ms, Options{}); !errors.Is(err, ErrNotCheckpoint) {
		t.Errorf("no checkpoint files: %v", err)
	}
	// under a prefix, the same checkpoint is found
	b := base(t)
	pre := memstore.New()
	for a, err := range b.st.List(t0ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		put(t, pre, "team/q1/"+a.Key, b.get(a.Key))
	}
	if r := inspect(t, gateway.WithPrefix(pre, "team/q1"), Options{}); r.Status != StatusClean {
		t.Errorf("under a prefix: %s", r.Status)
	}
	if _, err := Inspect(context.Background(), pre, Options{}); !errors.Is(err, ErrNotCheckpoint) {
		t.Errorf("the parent of a checkpoint: %v", err)
	}
}

func TestInspectCancelled(t *testing.T) {
	st := base(t).st
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Inspect(ctx, st, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// A store whose reads fail: the findings say "unreadable", naming the key.
type failingStore struct {
	gateway.Store
	fail string
}

func (f failingStore) Get(ctx context.Context, key string) ([]byte, gateway.Version, error) {
	if strings.HasPrefix(key, f.fail) {
		return nil, "", gateway.E("get", key, gateway.ErrPermission, errors.New("AccessDenied"))
	}
	return f.Store.Get(ctx, key)
}

func (f failingStore) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	if strings.HasPrefix(key, f.fail) {
		return nil, gateway.Attrs{}, gateway.E("get", key, gateway.ErrPermission, errors.New("AccessDenied"))
	}
	return f.Store.GetStream(ctx, key)
}

func TestInspectUnreadable(t *testing.T) {
	r := inspect(t, failingStore{Store: base(t).st, fail: "state/0/2/5.delta"}, Options{})
	if !hasFinding(r, SeverityError, FindingUnreadable, "state/0/2/5.delta") || !hasFinding(r, SeverityError, FindingStateUnrebuildable, "state/0/2") {
		t.Errorf("findings %+v", r.Findings)
	}
	r = inspect(t, failingStore{Store: base(t).st, fail: "commits/4"}, Options{})
	if r.Status != StatusInconsistent || !hasFinding(r, SeverityError, FindingUnreadable, "commits/4") {
		t.Errorf("status %s findings %+v", r.Status, r.Findings)
	}
}

func TestReadHelpersNameTheKey(t *testing.T) {
	b := base(t)
	b.put("offsets/3", []byte("v99\n{}\n1"))
	_, err := ReadOffsets(context.Background(), b.st, 3)
	var ve *VersionError
	if !errors.Is(err, ErrUnsupportedVersion) || !errors.As(err, &ve) || ve.Found != 99 || ve.Max != 2 {
		t.Fatalf("err = %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "offsets/3") || !strings.Contains(msg, "v99") || !strings.Contains(msg, "v2") {
		t.Errorf("message %q must name offsets/3, v99 and v2", msg)
	}
	b.put("commits/3", []byte("v3\n{}"))
	if _, err := ReadCommit(context.Background(), b.st, 3); !errors.Is(err, ErrUnsupportedVersion) || !strings.Contains(err.Error(), "commits/3") {
		t.Errorf("commit: %v", err)
	}
	if _, err := ReadCommit(context.Background(), b.st, 42); !errors.Is(err, gateway.ErrNotFound) {
		t.Errorf("missing commit: %v", err)
	}
	b.put("metadata", []byte("{}"))
	if _, err := ReadStreamMetadata(context.Background(), b.st); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "metadata") {
		t.Errorf("metadata: %v", err)
	}
	m, err := ReadOperatorMetadata(context.Background(), b.st, OperatorMetadataKey("1"))
	if err != nil || m.OperatorID != 1 || m.Stores[0].NumPartitions != 3 {
		t.Errorf("operator metadata %+v %v", m, err)
	}
}

func TestInspectSinkAhead(t *testing.T) {
	b := base(t)
	out := memstore.New()
	for id := int64(0); id <= 6; id++ {
		put(t, out, fmt.Sprintf("%s/%d", SinkMetadataDir, id), must(EncodeFileSinkLog([]SinkFileStatus{{Path: fmt.Sprintf("/out/part-%d", id), Action: SinkActionAdd}})))
	}
	r := inspect(t, b.st, Options{Sink: out})
	if !hasFinding(r, SeverityWarning, FindingSinkAhead, "_spark_metadata/6") || !r.Sink.CommittedLatestOffsets {
		t.Errorf("sink %+v findings %+v", r.Sink, r.Findings)
	}
}

func TestInspectHugePartitionCount(t *testing.T) {
	b := base(t)
	b.conf[ConfShufflePartitions] = "2000000000"
	b.batch(5, true)
	r := inspect(t, b.st, Options{})
	if !hasFinding(r, SeverityError, FindingStatePartitionMissing, "state/0/3") || len(operator(t, r, "0").Stores[0].Partitions) != 3 {
		t.Errorf("findings %v", findingsOf(r, SeverityError))
	}
}

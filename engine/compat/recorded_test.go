package compat

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/memstore"
)

const sparkRoot = "../../testdata/spark"

// recorded inspects a testdata checkpoint (read-only) and returns what it
// records.
func recorded(t *testing.T, rel string) *Recorded {
	t.Helper()
	st, err := filestore.New(filepath.Join(sparkRoot, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gateway.Close(st) })
	return recordedFrom(t, st)
}

func recordedFrom(t *testing.T, st gateway.Store) *Recorded {
	t.Helper()
	ctx := context.Background()
	rep, err := checkpoint.Inspect(ctx, st, checkpoint.Options{MaxBatches: 1, MaxStateVersions: -1})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := FromCheckpoint(ctx, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestFromSparkCheckpoints(t *testing.T) {
	for _, tc := range []struct {
		dir        string
		sources    []string // kinds
		partitions int
		ops        []string // kinds
		keys       string   // fieldsText of operator 0's keys
		stores     []string
		topics     []string
		watermark  int64
	}{
		{dir: "checkpoint-version-2.1.0", sources: []string{"long"}, partitions: 10, ops: []string{""}}, // no conf: partitions from state
		{dir: "checkpoint-version-2.3.1-for-multi-watermark-policy", sources: []string{"long", "long"}, partitions: 10, ops: nil, watermark: 10000},
		{dir: "checkpoint-version-2.3.1-without-commit-log-metadata", sources: []string{"long"}, partitions: 5, ops: []string{""}, watermark: 5000},
		{dir: "checkpoint-version-2.4.0-streaming-join", sources: []string{"long", "long"}, partitions: 5, ops: []string{KindJoin}},
		{dir: "checkpoint-version-3.2.0-session-window-with-repartition", sources: []string{"long"}, partitions: 5, ops: []string{KindSessionWindow},
			keys: "(sessionId string, userId string)", stores: []string{"default"}, watermark: 11000},
		{dir: "checkpoint-version-3.2.0-streaming-aggregate-with-repartition", sources: []string{"long"}, partitions: 5, ops: []string{""},
			keys: "(key1 int not null, key2 int not null)", stores: []string{"default"}},
		{dir: "checkpoint-version-3.3.0-streaming-deduplication", sources: []string{"long"}, partitions: 5, ops: []string{""},
			keys: "(_1 string)", stores: []string{"default"}},
		{dir: "checkpoint-version-4.0.0/hdfs/agg", sources: []string{"long"}, partitions: 5, ops: []string{KindAggregate},
			keys: "(_1 int not null)", stores: []string{"default"}},
		{dir: "checkpoint-version-4.0.0/rocksdb/dedup", sources: []string{"long"}, partitions: 5, ops: []string{KindDedup},
			keys: "(_1 int not null)", stores: []string{"default"}},
		{dir: "checkpoint-version-4.0.0/hdfs/limit", sources: []string{"long"}, partitions: 5, ops: []string{KindLimit}},
		{dir: "checkpoint-version-4.0.0-checkpoint-v2/rocksdb/join1", sources: []string{"long", "long"}, partitions: 5, ops: []string{KindJoin},
			keys: "(field0 int not null)", stores: []string{"left-keyToNumValues", "left-keyWithIndexToValue", "right-keyToNumValues", "right-keyWithIndexToValue"}, watermark: 9000},
		{dir: "checkpoint-version-4.0.0-tws-unsaferow", sources: []string{"long"}, partitions: 5, ops: []string{KindTransformWithState},
			keys: "(value string)", stores: []string{"default/countState"}},
		{dir: "kafka/checkpoint-version-2.4.3-kafka-include-headers-default", sources: []string{"kafka"}, partitions: 5, ops: []string{""},
			topics: []string{"spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62"}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			rec := recorded(t, tc.dir)
			if rec.Writer != WriterSpark {
				t.Errorf("writer %s", rec.Writer)
			}
			var kinds []string
			for _, s := range rec.Sources {
				kinds = append(kinds, s.Kind)
			}
			if !slices.Equal(kinds, tc.sources) {
				t.Errorf("source kinds %v, want %v", kinds, tc.sources)
			}
			if rec.Partitions != tc.partitions {
				t.Errorf("partitions %d, want %d", rec.Partitions, tc.partitions)
			}
			var ops []string
			for _, o := range rec.Operators {
				ops = append(ops, o.Kind)
			}
			if !slices.Equal(ops, tc.ops) {
				t.Errorf("operator kinds %q, want %q", ops, tc.ops)
			}
			if tc.keys != "" && fieldsText(rec.Operators[0].Keys) != tc.keys {
				t.Errorf("keys %s, want %s", fieldsText(rec.Operators[0].Keys), tc.keys)
			}
			if tc.stores != nil {
				var got []string
				for _, s := range rec.Operators[0].Stores {
					got = append(got, s.id())
				}
				slices.Sort(got)
				if !slices.Equal(got, tc.stores) {
					t.Errorf("stores %v, want %v", got, tc.stores)
				}
			}
			if tc.topics != nil && !slices.Equal(rec.Sources[0].Topics, tc.topics) {
				t.Errorf("topics %v, want %v", rec.Sources[0].Topics, tc.topics)
			}
			if rec.WatermarkMs != tc.watermark {
				t.Errorf("watermark %d, want %d", rec.WatermarkMs, tc.watermark)
			}
			for _, part := range []string{"output_mode", "sink", "filters", "watermark", "event_time"} {
				if rec.known(part) {
					t.Errorf("%s known for a Spark checkpoint", part)
				}
			}
		})
	}
}

// TestSpark330DedupKeyChange is Spark's own SPARK-39650 test: the
// checkpoint of dropDuplicates("_1") with dropDuplicates("_1", "_2")
// fails with STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE; the same key passes.
func TestSpark330DedupKeyChange(t *testing.T) {
	rec := recorded(t, "checkpoint-version-3.3.0-streaming-deduplication")
	same := &Plan{Version: 1, Sources: []Source{{Kind: "memory"}}, Partitions: 5,
		Operators: []Operator{{ID: intp(0), Kind: KindDedup, Keys: fields("_1 string")}}}
	if res := Compare(rec, same); !res.Compatible || len(res.Changes) != 0 {
		t.Fatalf("same dedup key: %+v", res.Changes)
	}
	two := &Plan{Version: 1, Sources: []Source{{Kind: "memory"}}, Partitions: 5,
		Operators: []Operator{{ID: intp(0), Kind: KindDedup, Keys: fields("_1 string", "_2 int")}}}
	res := Compare(rec, two)
	if res.Compatible || res.Changes[0].Rule != RuleKeys || !strings.Contains(res.Changes[0].Reason, "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE") {
		t.Fatalf("two dedup keys: %+v", res.Changes)
	}
}

func TestFromFileSourceLog(t *testing.T) {
	ms := memstore.New()
	ctx := context.Background()
	put := func(k, v string) {
		if _, err := ms.Put(ctx, k, []byte(v), gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
	put("metadata", `{"id":"q"}`)
	put("offsets/0", "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1,\"conf\":{\"spark.sql.shuffle.partitions\":\"3\"}}\n{\"logOffset\":0}")
	put("commits/0", "v1\n{\"nextBatchWatermarkMs\":0}")
	log, err := checkpoint.EncodeFileSourceLog([]checkpoint.FileEntry{
		{Path: "file:///data/in/date=1/a.json", BatchID: 0}, {Path: "file:///data/in/date=2/b.json", BatchID: 0}})
	if err != nil {
		t.Fatal(err)
	}
	put("sources/0/0", string(log))
	rec := recordedFrom(t, ms)
	if len(rec.Sources) != 1 || rec.Sources[0].Kind != "files" || rec.Sources[0].Path != "file:///data/in" {
		t.Fatalf("sources %+v", rec.Sources)
	}
	for _, tc := range []struct {
		path string
		ok   bool
	}{{"/data/in", true}, {"file:/data/in/", true}, {"/data", true}, {"/data/other", false}, {"/data/in/date=1", false}} {
		p := &Plan{Version: 1, Sources: []Source{{Kind: "files", Path: tc.path}}}
		if res := Compare(rec, p); res.Compatible != tc.ok {
			t.Errorf("path %s: compatible %v, want %v: %+v", tc.path, res.Compatible, tc.ok, res.Changes)
		}
	}
}

func TestFromDeltaOffset(t *testing.T) {
	ms := memstore.New()
	ctx := context.Background()
	ms.Put(ctx, "metadata", []byte(`{"id":"q"}`), gateway.None())
	ms.Put(ctx, "offsets/0", []byte("v1\n{}\n"+`{"sourceVersion":1,"reservoirId":"tbl-1","reservoirVersion":3,"index":-1,"isStartingVersion":false}`), gateway.None())
	rec := recordedFrom(t, ms)
	if rec.Sources[0].Kind != "delta" || rec.Sources[0].TableID != "tbl-1" {
		t.Fatalf("sources %+v", rec.Sources)
	}
	other := &Plan{Version: 1, Sources: []Source{{Kind: "delta", Path: "s3://x/t", TableID: "tbl-2"}}}
	if res := Compare(rec, other); res.Compatible {
		t.Fatal("another table id is compatible")
	}
}

func TestWithBaseline(t *testing.T) {
	rec := recorded(t, "checkpoint-version-3.3.0-streaming-deduplication")
	base := &Plan{Version: 1, Sources: []Source{{Kind: "memory"}}, Partitions: 7, OutputMode: "append",
		Filters: []string{"_2 > 0"}, Sink: &Sink{Kind: "files", Path: "/out"},
		Operators: []Operator{{ID: intp(0), Kind: KindDedup, Keys: fields("_1 string")}}}
	merged := WithBaseline(rec, base)
	if merged.Partitions != 5 || merged.OutputMode != "append" || merged.Operators[0].Kind != KindDedup || merged.Sources[0].Kind != "memory" {
		t.Fatalf("merged %+v", merged.Plan)
	}
	if !slices.ContainsFunc(merged.Notes, func(n string) bool { return strings.Contains(n, "partitions 7") }) {
		t.Fatalf("no note on the partitions conflict: %v", merged.Notes)
	}
	if rec.known("output_mode") == false && rec.OutputMode != "" {
		t.Fatal("WithBaseline changed its input")
	}
	prop := *base
	prop.Partitions = 5
	prop.OutputMode = "update"
	prop.Filters = nil
	prop.Sink = &Sink{Kind: "files", Path: "/out2"}
	res := Compare(merged, &prop)
	rules := map[string]Class{}
	for _, ch := range res.Changes {
		rules[ch.Rule] = ch.Class
	}
	want := map[string]Class{RuleOutputMode: NotAllowed, RuleFilters: Allowed, RuleSinkIdentity: NotAllowed}
	for r, c := range want {
		if rules[r] != c {
			t.Errorf("rule %s: %s, want %s (all: %+v)", r, rules[r], c, res.Changes)
		}
	}
}

// TestFromEmptySparkCheckpoint: before its first batch a checkpoint
// records neither sources nor operators; nothing is flagged.
func TestFromEmptySparkCheckpoint(t *testing.T) {
	ms := memstore.New()
	ms.Put(context.Background(), "metadata", []byte(`{"id":"q"}`), gateway.None())
	rec := recordedFrom(t, ms)
	p := &Plan{Version: 1, Sources: []Source{{Kind: "kafka", Topics: []string{"t"}}}, Partitions: 4,
		Operators: []Operator{{ID: intp(0), Kind: KindDedup, Keys: fields("id string")}}}
	res := Compare(rec, p)
	if !res.Compatible || len(res.Changes) != 0 || len(res.Unchecked) < 3 {
		t.Fatalf("empty checkpoint: %+v %+v", res.Changes, res.Unchecked)
	}
}

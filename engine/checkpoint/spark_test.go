package checkpoint

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// Every full checkpoint directory in testdata/spark, with what INDEX.md
// (Spark's own tests) and SPARK-FORMAT.md say about it.

type opWant struct {
	id, name, provider string
	stores             []string // in order
	partitions         int      // per store
	required           int64
	rebuildFrom        int64
	rebuildFiles       int
}

type sparkCase struct {
	dir          string
	queryID      string
	status       Status
	L, C         *int64
	watermark    *int64
	offsetsLog   []Range
	commitVer    int
	format       int
	confs        map[string]string // subset of Confs
	confDefaults map[string]string // subset of ConfDefaults
	noConfKeys   []string          // keys absent from Confs
	ops          []opWant
	// problems: exactly these error and warning findings ("severity id key")
	problems []string
	check    func(t *testing.T, r *Report)
}

const sparkProvider = "org.apache.spark.sql.execution.streaming.state."

var sparkCases = []sparkCase{
	{
		// SPARK-38033: offsets 0,1,2,4 with 3 missing → "batch 3 doesn't exist".
		dir: "checkpoint-test-offsetId-commitId-inconsistent", queryID: "d4358946-170c-49a7-823b-d8e4e9126616",
		status: StatusInconsistent, L: i64(4), C: i64(2), offsetsLog: []Range{{0, 2}, {4, 4}}, commitVer: 1, format: 1,
		problems: []string{"error offsets-gap-latest offsets/3"},
		check: func(t *testing.T, r *Report) {
			if r.Resume != nil {
				t.Errorf("an inconsistent checkpoint has no resume plan, got %+v", r.Resume)
			}
			if len(r.Operators) != 0 {
				t.Errorf("no state expected, got %d operators", len(r.Operators))
			}
			if r.OK() {
				t.Error("OK() must be false")
			}
		},
	},
	{
		// Spark 2.1: no commit log, so batch 1 is re-run first; 10 partitions
		// of 1.delta/2.delta; the metadata has no conf.
		dir: "checkpoint-version-2.1.0", status: StatusInFlight, L: i64(1), C: nil, watermark: i64(0),
		offsetsLog: []Range{{0, 1}}, format: 1,
		noConfKeys:   []string{"spark.sql.shuffle.partitions"},
		confDefaults: map[string]string{"spark.sql.streaming.multipleWatermarkPolicy": "min", ConfCompressionCodec: "lz4", "spark.sql.streaming.aggregation.stateFormatVersion": "1"},
		ops:          []opWant{{id: "0", provider: ProviderHDFS, stores: []string{"default"}, partitions: 10, required: 1, rebuildFrom: 0, rebuildFiles: 1}},
		check: func(t *testing.T, r *Report) {
			if r.Resume == nil || r.Resume.NextBatch != 1 || !r.Resume.Rerun || r.Resume.StateVersion != 1 {
				t.Errorf("resume = %+v, want batch 1 re-run on state version 1", r.Resume)
			}
			if !hasFinding(r, SeverityInfo, FindingNoCommitLog, CommitsDir) {
				t.Error("want a no-commit-log finding")
			}
			if n := countFindings(r, FindingStateNewerThanCommit); n != 10 {
				t.Errorf("want 10 state-newer-than-commit findings (2.delta of the in-flight batch), got %d", n)
			}
			var puts [3]int64
			for _, p := range store(t, operator(t, r, "0"), "default").Partitions {
				for _, d := range p.Details {
					if d.Puts == nil || d.Deletes == nil || *d.Deletes != 0 {
						t.Errorf("%s: puts/deletes %v/%v", d.Key, fmtPtr(d.Puts), fmtPtr(d.Deletes))
						continue
					}
					if (d.Bytes == 46) != (*d.Puts == 0) {
						t.Errorf("%s: %d bytes with %d puts (a 46-byte delta is empty)", d.Key, d.Bytes, *d.Puts)
					}
					puts[d.Version] += *d.Puts
				}
			}
			if puts[1] != 4 || puts[2] != 6 {
				t.Errorf("puts per version = %v, want 4 in version 1 and 6 in version 2", puts)
			}
			// The state after batch 1 is what the restarted query answers
			// before 9 is added: (1,1),(2,1),(3,2),(4,2),(5,2),(6,2),(7,1),(8,1).
			want := map[uint32]uint64{1: 1, 2: 1, 3: 2, 4: 2, 5: 2, 6: 2, 7: 1, 8: 1}
			if got := aggState21(t); !maps.Equal(got, want) {
				t.Errorf("state version 2 = %v, want %v", got, want)
			}
			p1 := store(t, operator(t, r, "0"), "default").Partitions[1]
			if d := detail(t, &p1, 1, KindDelta); *d.Puts != 1 {
				t.Errorf("state/0/1/1.delta holds key 3 only, got %d puts", *d.Puts)
			}
		},
	},
	{
		// Two sources; no multipleWatermarkPolicy conf, so min is forced.
		dir: "checkpoint-version-2.3.1-for-multi-watermark-policy", queryID: "549eeb1a-d762-420c-bb44-3fd6d73a5268",
		status: StatusClean, L: i64(1), C: i64(1), watermark: i64(10000), offsetsLog: []Range{{0, 1}}, commitVer: 1, format: 1,
		confs:        map[string]string{"spark.sql.shuffle.partitions": "10"},
		confDefaults: map[string]string{"spark.sql.streaming.multipleWatermarkPolicy": "min"},
		noConfKeys:   []string{"spark.sql.streaming.multipleWatermarkPolicy"},
		check: func(t *testing.T, r *Report) {
			if len(r.Sources) != 2 || r.Sources[0].Offset == nil || r.Sources[1].Offset == nil {
				t.Fatalf("want two sources with offsets, got %+v", r.Sources)
			}
			if v := r.Sources[0].Offset.Value; r.Sources[0].Kind != OffsetLong || v == nil || *v != 1 {
				t.Errorf("source 0 = %+v, want long 1", r.Sources[0].Offset)
			}
			if v := r.Sources[1].Offset.Value; v == nil || *v != 0 {
				t.Errorf("source 1 = %+v, want long 0", r.Sources[1].Offset)
			}
			for _, b := range r.Batches {
				if !b.Committed || b.NextWatermarkMs != nil {
					t.Errorf("batch %d: commit \"{}\" has no nextBatchWatermarkMs, got %+v", b.ID, b)
				}
			}
		},
	},
	{
		// Aggregation state format 1 (no aggregation conf recorded → 1 forced);
		// inputs 3 then 3,2.
		dir: "checkpoint-version-2.3.1-streaming-aggregate-state-format-1", queryID: "2f32aca2-1b97-458f-a48f-109328724f09",
		status: StatusClean, L: i64(1), C: i64(1), watermark: i64(0), commitVer: 1, format: 1,
		confDefaults: map[string]string{"spark.sql.streaming.aggregation.stateFormatVersion": "1"},
		ops:          []opWant{{id: "0", provider: ProviderHDFS, stores: []string{"default"}, partitions: 5, required: 2, rebuildFrom: 0, rebuildFiles: 2}},
		check: func(t *testing.T, r *Report) {
			got := putsPerVersion(t, r, "0", "default")
			if got[1] != 1 || got[2] != 2 {
				t.Errorf("puts per version = %v, want 1 (key 3) then 2 (keys 3, 2)", got)
			}
		},
	},
	{
		// SPARK-24699: commits "{}" without nextBatchWatermarkMs; the
		// watermark (5000) comes from the offset log.
		dir: "checkpoint-version-2.3.1-without-commit-log-metadata", queryID: "73f7f943-0a08-4ffb-a504-9fa88ff7612a",
		status: StatusClean, L: i64(1), C: i64(1), watermark: i64(5000), commitVer: 1, format: 1,
		ops: []opWant{{id: "0", provider: ProviderHDFS, stores: []string{"default"}, partitions: 5, required: 2, rebuildFrom: 0, rebuildFiles: 2}},
		check: func(t *testing.T, r *Report) {
			wms := map[int64]int64{}
			for _, b := range r.Batches {
				wms[b.ID] = *b.WatermarkMs
				if b.NextWatermarkMs != nil {
					t.Errorf("batch %d has no nextBatchWatermarkMs in its commit", b.ID)
				}
			}
			if wms[0] != 0 || wms[1] != 5000 {
				t.Errorf("batch watermarks = %v, want 0 then 5000", wms)
			}
		},
	},
	{
		// Stream-stream join from 2.4: two sources, four stores, no join
		// state format in the conf → format 1.
		dir: "checkpoint-version-2.4.0-streaming-join", queryID: "1ab1ee6f-993c-4a51-824c-1c7cc8202f62",
		status: StatusClean, L: i64(0), C: i64(0), commitVer: 1, format: 1,
		confDefaults: map[string]string{"spark.sql.streaming.join.stateFormatVersion": "1"},
		ops: []opWant{{id: "0", provider: ProviderHDFS, partitions: 5, required: 1, rebuildFrom: 0, rebuildFiles: 1,
			stores: []string{"left-keyToNumValues", "left-keyWithIndexToValue", "right-keyToNumValues", "right-keyWithIndexToValue"}}},
		check: func(t *testing.T, r *Report) {
			if len(r.Sources) != 2 {
				t.Errorf("want 2 sources, got %d", len(r.Sources))
			}
		},
	},
	{
		// Kafka source: per-partition offsets and the initial-offsets file
		// (a leading 0 byte, v1, JSON) in sources/0/0.
		dir: "kafka/checkpoint-version-2.4.3-kafka-include-headers-default", queryID: "fc415a71-f0a2-4c3c-aeaf-f9e258c3f726",
		status: StatusClean, L: i64(0), C: i64(0), commitVer: 1, format: 1,
		ops: []opWant{{id: "0", provider: ProviderHDFS, stores: []string{"default"}, partitions: 5, required: 1, rebuildFrom: 0, rebuildFiles: 1}},
		check: func(t *testing.T, r *Report) {
			if len(r.Sources) != 1 {
				t.Fatalf("want 1 source, got %+v", r.Sources)
			}
			s := r.Sources[0]
			const topic = "spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62"
			if s.Kind != OffsetKafka || s.Offset == nil || len(s.Offset.Kafka) != 5 {
				t.Fatalf("source = %+v, want kafka with 5 partitions", s)
			}
			for i, k := range s.Offset.Kafka {
				if k.Topic != topic || k.Partition != int32(i) || k.Offset != 3 {
					t.Errorf("partition offset %d = %+v, want %s-%d at 3", i, k, topic, i)
				}
			}
			if s.Log == nil || s.Log.Kind != SourceLogKafkaInitial || len(s.Log.Initial) != 5 {
				t.Fatalf("source log = %+v, want kafka initial offsets", s.Log)
			}
			for _, k := range s.Log.Initial {
				if k.Offset != 0 {
					t.Errorf("initial offset %+v, want 0 (startingOffsets=earliest)", k)
				}
			}
		},
	},
	{
		dir: "checkpoint-version-2.4.5-for-compatibility-test-common-functions", queryID: "5f1362da-99ce-4ba2-97e1-d992c295e563",
		status: StatusClean, L: i64(0), C: i64(0), commitVer: 1, format: 1,
		ops: []opWant{{id: "0", provider: ProviderHDFS, stores: []string{"default"}, partitions: 5, required: 1, rebuildFrom: 0, rebuildFiles: 1}},
	},
	{
		dir: "checkpoint-version-2.4.5-for-compatibility-test-deduplicate", queryID: "26fe8d3d-d101-44b0-b9c1-a2f9f09cea69",
		status: StatusClean, L: i64(0), C: i64(0), commitVer: 1, format: 1,
		ops: []opWant{{id: "0", provider: ProviderHDFS, stores: []string{"default"}, partitions: 5, required: 1, rebuildFrom: 0, rebuildFiles: 1}},
	},
	{
		// SPARK-33263: no codec conf → read as lz4; 1 partition; input 1,2,3.
		dir: "checkpoint-version-3.0.0-streaming-statestore-codec", queryID: "6bcf6671-d23e-4ad8-824f-98aa5924ce6d",
		status: StatusClean, L: i64(0), C: i64(0), commitVer: 1, format: 1,
		confs:        map[string]string{"spark.sql.shuffle.partitions": "1"},
		confDefaults: map[string]string{ConfCompressionCodec: "lz4"},
		noConfKeys:   []string{ConfCompressionCodec},
		ops:          []opWant{{id: "0", provider: ProviderHDFS, stores: []string{"default"}, partitions: 1, required: 1, rebuildFrom: 0, rebuildFiles: 1}},
		check: func(t *testing.T, r *Report) {
			if got := putsPerVersion(t, r, "0", "default"); got[1] != 3 {
				t.Errorf("version 1 puts = %d, want 3 (keys 1, 2, 3)", got[1])
			}
		},
	},
	{
		// Session window; watermark 11000 in offsets and commits; .crc sidecars all match.
		dir: "checkpoint-version-3.2.0-session-window-with-repartition", queryID: "c3d27d93-536b-49ce-a62f-f2777855a1fb",
		status: StatusClean, L: i64(1), C: i64(1), watermark: i64(11000), commitVer: 1, format: 1,
		ops: []opWant{{id: "0", provider: ProviderHDFS, stores: []string{"default"}, partitions: 5, required: 2, rebuildFrom: 0, rebuildFiles: 2}},
		check: func(t *testing.T, r *Report) {
			for _, b := range r.Batches {
				if b.ID == 1 && (b.NextWatermarkMs == nil || *b.NextWatermarkMs != 11000) {
					t.Errorf("commits/1 nextBatchWatermarkMs = %s, want 11000", fmtPtr(b.NextWatermarkMs))
				}
			}
		},
	},
	{
		// SPARK-38204: no useStrictDistribution conf → false; inputs 3 then 3,2.
		dir: "checkpoint-version-3.2.0-streaming-aggregate-with-repartition", queryID: "cd462130-c8fb-4212-8b08-4e1b9e10dbcf",
		status: StatusClean, L: i64(1), C: i64(1), commitVer: 1, format: 1,
		confDefaults: map[string]string{"spark.sql.streaming.statefulOperator.useStrictDistribution": "false"},
		ops:          []opWant{{id: "0", provider: ProviderHDFS, stores: []string{"default"}, partitions: 5, required: 2, rebuildFrom: 0, rebuildFiles: 2}},
		check: func(t *testing.T, r *Report) {
			if got := putsPerVersion(t, r, "0", "default"); got[1] != 1 || got[2] != 2 {
				t.Errorf("puts per version = %v, want 1 then 2", got)
			}
		},
	},
	{
		// SPARK-39650: schema v2 with all columns as the value schema; dedup on _1.
		dir: "checkpoint-version-3.3.0-streaming-deduplication", queryID: "33e8de33-00b8-4b60-8246-df2f433257ff",
		status: StatusClean, L: i64(1), C: i64(1), commitVer: 1, format: 1,
		confs: map[string]string{"spark.sql.streaming.statefulOperator.useStrictDistribution": "true"},
		ops:   []opWant{{id: "0", provider: ProviderHDFS, stores: []string{"default"}, partitions: 5, required: 2, rebuildFrom: 0, rebuildFiles: 2}},
		check: func(t *testing.T, r *Report) {
			s := store(t, operator(t, r, "0"), "default")
			if s.SchemaVersion != 2 || len(s.Schema) != 1 {
				t.Fatalf("schema = v%d %+v, want v2", s.SchemaVersion, s.Schema)
			}
			if !strings.Contains(s.Schema[0].KeySchema, `"name":"_1","type":"string"`) || strings.Contains(s.Schema[0].KeySchema, `"_2"`) {
				t.Errorf("key schema %s, want _1 string only", s.Schema[0].KeySchema)
			}
			if !strings.Contains(s.Schema[0].ValueSchema, `"_2"`) {
				t.Errorf("value schema %s, want all columns", s.Schema[0].ValueSchema)
			}
			// inputs ("a",1) then ("a",2),("b",3): "a" once, then "b"
			if got := putsPerVersion(t, r, "0", "default"); got[1] != 1 || got[2] != 1 {
				t.Errorf("puts per version = %v, want 1 then 1", got)
			}
		},
	},
	{
		// Spark 4.0 transformWithState: operator metadata v2, schema v3, a
		// commit with stateUniqueIds {}; the offsets' Hadoop .crc files are
		// stale (the files were edited by hand in SPARK-51172).
		dir: "checkpoint-version-4.0.0-tws-unsaferow", queryID: "1341f9d1-5100-4426-876c-2754aeaca02b",
		status: StatusClean, L: i64(1), C: i64(1), commitVer: 1, format: 1,
		confs: map[string]string{"spark.sql.streaming.stateStore.encodingFormat": "unsaferow"},
		ops:   []opWant{{id: "0", name: "transformWithStateExec", provider: ProviderRocksDB, stores: []string{"default"}, partitions: 5, required: 2, rebuildFrom: 1, rebuildFiles: 2}},
		problems: []string{
			"warning checksum-mismatch offsets/0",
			"warning checksum-mismatch offsets/1",
		},
		check: func(t *testing.T, r *Report) {
			op := operator(t, r, "0")
			if op.MetadataVersion != 2 {
				t.Errorf("operator metadata v%d, want v2", op.MetadataVersion)
			}
			s := store(t, op, "default")
			if s.SchemaVersion != 3 || len(s.Schema) != 1 || s.Schema[0].Name != "countState" || s.Schema[0].KeySchemaID != nil {
				t.Errorf("schema = v%d %+v, want v3 with column family countState and no schema ids", s.SchemaVersion, s.Schema)
			}
			p := s.Partitions[0]
			if d := detail(t, &p, 2, KindChangelog); d.Changelog != 2 {
				t.Errorf("2.changelog is v%d, want v2 (column families)", d.Changelog)
			}
			if !r.OK() {
				t.Error("stale Hadoop checksums are warnings: OK() must hold")
			}
		},
	},
}

func init() {
	// Spark 4.0.0 golden checkpoints: 5 queries × 2 providers.
	type q struct {
		name, op string
		L        int64
		stores   []string
		parts    int
	}
	join := []string{"left-keyToNumValues", "left-keyWithIndexToValue", "right-keyToNumValues", "right-keyWithIndexToValue"}
	queries := []q{
		{"agg", "stateStoreSave", 3, []string{"default"}, 5},
		{"dedup", "dedupe", 3, []string{"default"}, 5},
		{"limit", "globalLimit", 3, []string{"default"}, 1},
		{"join1", "symmetricHashJoin", 4, join, 5},
		{"join2", "symmetricHashJoin", 4, join, 5},
	}
	for _, prov := range []string{ProviderHDFS, ProviderRocksDB} {
		for _, qq := range queries {
			c := sparkCase{
				dir: "checkpoint-version-4.0.0/" + prov + "/" + qq.name, status: StatusClean,
				L: i64(qq.L), C: i64(qq.L), offsetsLog: []Range{{0, qq.L}}, commitVer: 1, format: 1,
				confs: map[string]string{ConfProviderClass: sparkProvider + map[string]string{ProviderHDFS: "HDFSBackedStateStoreProvider", ProviderRocksDB: "RocksDBStateStoreProvider"}[prov]},
				// version L+1 is rebuilt from the snapshot/zip of version 4, plus 5.delta/5.changelog for joins
				ops: []opWant{{id: "0", name: qq.op, provider: prov, stores: qq.stores, partitions: qq.parts, required: qq.L + 1, rebuildFrom: 4, rebuildFiles: int(qq.L+1-4) + 1}},
			}
			if strings.HasPrefix(qq.name, "join1") {
				// the offset logs of both join1 folders record join state format 2 (INDEX.md note)
				c.confs["spark.sql.streaming.join.stateFormatVersion"] = "2"
			}
			name, p := qq.name, prov
			c.check = func(t *testing.T, r *Report) { check400(t, r, p, name) }
			sparkCases = append(sparkCases, c)
		}
	}
	// Checkpoint format v2 (RocksDB only): commit v2 with stateUniqueIds,
	// <ver>_<uuid> files, changelog v3 with lineage.
	for _, qq := range queries {
		if qq.name == "agg" {
			continue
		}
		name := qq.name
		sparkCases = append(sparkCases, sparkCase{
			dir: "checkpoint-version-4.0.0-checkpoint-v2/rocksdb/" + qq.name, status: StatusClean,
			L: i64(qq.L), C: i64(qq.L), offsetsLog: []Range{{0, qq.L}}, commitVer: 2, format: 2,
			ops:   []opWant{{id: "0", name: qq.op, provider: ProviderRocksDB, stores: qq.stores, partitions: qq.parts, required: qq.L + 1, rebuildFrom: 4, rebuildFiles: int(qq.L+1-4) + 1}},
			check: func(t *testing.T, r *Report) { checkV2(t, r, name) },
		})
	}
}

// putsPerVersion sums the decoded puts of a store per version.
func putsPerVersion(t *testing.T, r *Report, op, st string) map[int64]int64 {
	t.Helper()
	out := map[int64]int64{}
	for _, p := range store(t, operator(t, r, op), st).Partitions {
		for _, d := range p.Details {
			if d.Kind != KindDelta && d.Kind != KindChangelog {
				continue
			}
			if d.Puts == nil {
				t.Fatalf("%s: not decoded (%s)", d.Key, d.Note)
			}
			out[d.Version] += *d.Puts
		}
	}
	return out
}

func check400(t *testing.T, r *Report, prov, name string) {
	op := operator(t, r, "0")
	if op.MetadataVersion != 1 {
		t.Errorf("operator metadata v%d, want v1", op.MetadataVersion)
	}
	for _, s := range op.Stores {
		if s.SchemaVersion != 2 {
			t.Errorf("store %s: schema v%d, want v2", s.Name, s.SchemaVersion)
		}
		for _, p := range s.Partitions {
			if p.Snapshots != 2 || p.LatestSnapshot == nil || *p.LatestSnapshot != 4 {
				t.Errorf("store %s partition %d: snapshots %d (latest %s), want 2 and 4", s.Name, p.ID, p.Snapshots, fmtPtr(p.LatestSnapshot))
			}
		}
	}
	switch name {
	case "agg":
		s := store(t, op, "default")
		if !strings.Contains(s.Schema[0].KeySchema, `{"name":"_1","type":"integer","nullable":false`) ||
			!strings.Contains(s.Schema[0].ValueSchema, `{"name":"count","type":"long","nullable":false`) {
			t.Errorf("agg schema %+v, want key _1 int not null, value count long not null", s.Schema)
		}
		p1 := s.Partitions[1]
		kind := KindDelta
		if prov == ProviderRocksDB {
			kind = KindChangelog
			z := detail(t, &p1, 4, KindZip)
			if z.NumKeys == nil || *z.NumKeys != 2 || z.SSTFiles == nil || *z.SSTFiles != 2 {
				t.Errorf("state/0/1/4.zip metadata: numKeys %s, sst files %v; want 2 and 2", fmtPtr(z.NumKeys), z.SSTFiles)
			}
			if d := detail(t, &p1, 4, KindChangelog); d.Changelog != 1 {
				t.Errorf("4.changelog v%d, want v1", d.Changelog)
			}
		}
		// SPARK-FORMAT: partition 1's version 1 holds key 3 with count 1
		if d := detail(t, &p1, 1, kind); d.Puts == nil || *d.Puts != 1 || *d.Deletes != 0 {
			t.Errorf("state/0/1/1.%s: %s puts, want 1", kind, fmtPtr(d.Puts))
		}
	case "dedup":
		s := store(t, op, "default")
		if !strings.Contains(s.Schema[0].ValueSchema, `"__dummy__","type":"void"`) {
			t.Errorf("dedup value schema %s, want __dummy__ NullType", s.Schema[0].ValueSchema)
		}
	case "join1", "join2":
		s := store(t, op, "left-keyToNumValues")
		if !strings.Contains(s.Schema[0].KeySchema, `"field0","type":"integer"`) || !strings.Contains(s.Schema[0].ValueSchema, `"value","type":"long"`) {
			t.Errorf("keyToNumValues schema %+v, want key field0 int, value long", s.Schema)
		}
		if name == "join1" && prov == ProviderHDFS { // the removal SPARK-FORMAT shows
			p4 := s.Partitions[4]
			if d := detail(t, &p4, 5, KindDelta); *d.Puts != 0 || *d.Deletes != 1 {
				t.Errorf("state/0/4/left-keyToNumValues/5.delta: %d puts %d deletes, want one delete", *d.Puts, *d.Deletes)
			}
		}
	case "limit":
		if !hasFinding(r, SeverityInfo, FindingStateSinglePartition, "state/0/0") {
			t.Error("limit: want a state-single-partition finding")
		}
	}
}

func checkV2(t *testing.T, r *Report, name string) {
	op := operator(t, r, "0")
	for _, s := range op.Stores {
		for _, p := range s.Partitions {
			if p.RebuildFrom == nil || *p.RebuildFrom != 4 {
				t.Errorf("%s/%d: rebuild from %s, want the zip of version 4", s.Name, p.ID, fmtPtr(p.RebuildFrom))
			}
			for _, d := range p.Details {
				if d.UniqueID == "" {
					t.Errorf("%s: checkpoint v2 files carry unique ids", d.Key)
				}
				if d.Kind == KindChangelog && d.Changelog != 3 {
					t.Errorf("%s: changelog v%d, want v3", d.Key, d.Changelog)
				}
			}
		}
	}
	var c *Batch
	for i := range r.Batches {
		if r.Batches[i].ID == *r.LatestCommitBatch {
			c = &r.Batches[i]
		}
	}
	if c == nil || !c.Committed {
		t.Fatal("latest commit not detailed")
	}
	if strings.HasPrefix(name, "join") {
		// join1 stores have schema v1 files per store (INDEX.md)
		want := map[string]int{"join1": 1, "join2": 2}[name]
		for _, s := range op.Stores {
			if s.SchemaVersion != want {
				t.Errorf("%s store %s: schema v%d, want v%d", name, s.Name, s.SchemaVersion, want)
			}
		}
	}
}

func TestInspectSparkCheckpoints(t *testing.T) {
	for _, c := range sparkCases {
		t.Run(c.dir, func(t *testing.T) {
			r := inspect(t, sparkStore(t, c.dir), Options{})
			if c.queryID != "" && r.QueryID != c.queryID {
				t.Errorf("query id %q, want %q", r.QueryID, c.queryID)
			}
			if r.QueryID == "" {
				t.Error("no query id")
			}
			if r.Writer.Kind != WriterSpark {
				t.Errorf("writer %q, want spark", r.Writer.Kind)
			}
			if r.Status != c.status {
				t.Errorf("status %s, want %s", r.Status, c.status)
			}
			if !eqPtr(r.LatestOffsetsBatch, c.L) || !eqPtr(r.LatestCommitBatch, c.C) {
				t.Errorf("L, C = %s, %s; want %s, %s", fmtPtr(r.LatestOffsetsBatch), fmtPtr(r.LatestCommitBatch), fmtPtr(c.L), fmtPtr(c.C))
			}
			if c.watermark != nil && !eqPtr(r.WatermarkMs, c.watermark) {
				t.Errorf("watermark %s, want %d", fmtPtr(r.WatermarkMs), *c.watermark)
			}
			if c.offsetsLog != nil && !slices.Equal(r.OffsetsLog.Ranges, c.offsetsLog) {
				t.Errorf("offsets %v, want %v", r.OffsetsLog.Ranges, c.offsetsLog)
			}
			if r.Format.CommitLogVersion != c.commitVer || r.Format.CheckpointFormat != c.format || r.Format.OffsetLogVersion != 1 {
				t.Errorf("format %+v, want commit log v%d, checkpoint format %d, offset log v1", r.Format, c.commitVer, c.format)
			}
			for k, v := range c.confs {
				if r.Confs[k] != v {
					t.Errorf("conf %s = %q, want %q", k, r.Confs[k], v)
				}
			}
			for k, v := range c.confDefaults {
				if r.ConfDefaults[k] != v {
					t.Errorf("conf default %s = %q, want %q", k, r.ConfDefaults[k], v)
				}
			}
			for _, k := range c.noConfKeys {
				if _, ok := r.Confs[k]; ok {
					t.Errorf("conf %s recorded, want absent", k)
				}
			}
			got := findingsOf(r, SeverityWarning)
			want := slices.Clone(c.problems)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("error/warning findings:\n got %q\nwant %q\nall: %+v", got, want, r.Findings)
			}
			if len(r.Operators) != len(c.ops) {
				t.Fatalf("%d operators, want %d", len(r.Operators), len(c.ops))
			}
			for _, w := range c.ops {
				op := operator(t, r, w.id)
				if op.Name != w.name || op.Provider != w.provider {
					t.Errorf("operator %s = %q/%s, want %q/%s", w.id, op.Name, op.Provider, w.name, w.provider)
				}
				var names []string
				for _, s := range op.Stores {
					names = append(names, s.Name)
					if !s.Rebuildable {
						t.Errorf("store %s not rebuildable", s.Name)
					}
					if len(s.Partitions) != w.partitions {
						t.Errorf("store %s: %d partitions, want %d", s.Name, len(s.Partitions), w.partitions)
					}
					for _, p := range s.Partitions {
						if p.RequiredVersion != w.required || !p.Rebuildable || !eqPtr(p.RebuildFrom, &w.rebuildFrom) || p.RebuildFiles != w.rebuildFiles {
							t.Errorf("store %s partition %d: required %d rebuildable %v from %s with %d files (%s); want %d from %d with %d",
								s.Name, p.ID, p.RequiredVersion, p.Rebuildable, fmtPtr(p.RebuildFrom), p.RebuildFiles, p.Problem, w.required, w.rebuildFrom, w.rebuildFiles)
						}
					}
				}
				if !slices.Equal(names, w.stores) {
					t.Errorf("stores %v, want %v", names, w.stores)
				}
				if op.Bytes <= 0 || op.Files <= 0 {
					t.Errorf("operator %s: %d files, %d bytes", op.ID, op.Files, op.Bytes)
				}
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

// Directories holding no checkpoint are ErrNotCheckpoint (so the CLI can
// exit 2): the parents of the 4.0.0 folders and the single-log folders.
func TestInspectNotCheckpoint(t *testing.T) {
	for _, dir := range []string{"checkpoint-version-4.0.0", "checkpoint-version-4.0.0-checkpoint-v2", "file-sink-log-version-2.1.0",
		"file-source-log-version-2.1.0", "offset-map", "offset-log-version-2.1.0", "testCommitLogV1", "testCommitLogV2", "kafka"} {
		t.Run(dir, func(t *testing.T) {
			_, err := Inspect(context.Background(), sparkStore(t, dir), Options{})
			if !errors.Is(err, ErrNotCheckpoint) {
				t.Fatalf("err = %v, want ErrNotCheckpoint", err)
			}
		})
	}
}

// aggState21 rebuilds version 2 of the 2.1.0 aggregation (deltas 1 and 2
// of every partition) decoding the rows, which the package never does:
// key UnsafeRow[value int], value UnsafeRow[value int, count long] + 4 bytes.
func aggState21(t *testing.T) map[uint32]uint64 {
	t.Helper()
	state := map[uint32]uint64{}
	for part := range 10 {
		for v := 1; v <= 2; v++ {
			raw, err := DecodeLZ4Block(sparkFile(t, fmt.Sprintf("checkpoint-version-2.1.0/state/0/%d/%d.delta", part, v)), 0)
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; ; {
				kl := int(int32(binary.BigEndian.Uint32(raw[off:])))
				if kl < 0 {
					break
				}
				key := raw[off+4 : off+4+kl]
				off += 4 + kl
				vl := int(binary.BigEndian.Uint32(raw[off:]))
				val := raw[off+4 : off+4+vl]
				off += 4 + vl
				if kl != 16 || vl != 28 {
					t.Fatalf("partition %d version %d: key %d / value %d bytes, want 16 / 28", part, v, kl, vl)
				}
				state[binary.LittleEndian.Uint32(key[8:])] = binary.LittleEndian.Uint64(val[16:])
			}
		}
	}
	return state
}

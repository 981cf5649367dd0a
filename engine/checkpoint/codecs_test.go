package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/internal/filetree"
)

// Section B of INDEX.md: single logs and log directories.

func TestOffsetLogSpark210(t *testing.T) {
	// OffsetSeqLogSuite "read Spark 2.1.0 log format": two SerializedOffsets,
	// OffsetSeqMetadata(0, 1480981499528); the file ends with a newline.
	raw := sparkFile(t, "offset-log-version-2.1.0/0")
	if !bytes.HasSuffix(raw, []byte("\n")) {
		t.Fatal("the golden file ends with a newline")
	}
	seq, err := DecodeOffsetSeq(raw)
	if err != nil {
		t.Fatal(err)
	}
	if seq.Version != 1 || seq.Metadata == nil || seq.Metadata.BatchWatermarkMs != 0 || seq.Metadata.BatchTimestampMs != 1480981499528 || seq.Metadata.Conf != nil {
		t.Fatalf("got %+v / %+v", seq, seq.Metadata)
	}
	if len(seq.Sources) != 2 || seq.Sources[0].JSON != `{"logOffset":345}` || seq.Sources[1].JSON != `{"topic-0":{"0":1}}` {
		t.Fatalf("sources %+v", seq.Sources)
	}
	f := ParseSourceOffset(seq.Sources[0])
	k := ParseSourceOffset(seq.Sources[1])
	if f.Kind != OffsetFile || *f.LogOffset != 345 {
		t.Errorf("source 0 = %+v, want file offset 345", f)
	}
	if k.Kind != OffsetKafka || !slices.Equal(k.Kafka, []KafkaPartitionOffset{{"topic-0", 0, 1}}) {
		t.Errorf("source 1 = %+v, want kafka topic-0/0 at 1", k)
	}
	// as a checkpoint (with the 2.1.0 query metadata): batch 0 in flight;
	// rowChecksum.enabled is missing, so Spark forces false
	ms := memstore.New()
	put(t, ms, "metadata", sparkFile(t, "query-metadata-logs-version-2.1.0.txt"))
	put(t, ms, "offsets/0", raw)
	r := inspect(t, ms, Options{})
	if r.Status != StatusInFlight || r.Resume == nil || r.Resume.NextBatch != 0 || !r.Resume.Rerun {
		t.Errorf("status %s resume %+v, want batch 0 re-run", r.Status, r.Resume)
	}
	if r.ConfDefaults["spark.sql.streaming.stateStore.rowChecksum.enabled"] != "false" {
		t.Errorf("conf defaults %v, want rowChecksum.enabled=false", r.ConfDefaults)
	}
	if r.QueryID != "d366a8bf-db79-42ca-b5a4-d9ca0a11d63e" || len(r.Sources) != 2 || r.Sources[0].Kind != OffsetFile || r.Sources[1].Kind != OffsetKafka {
		t.Errorf("query %q sources %+v", r.QueryID, r.Sources)
	}
}

func TestOffsetMapV2(t *testing.T) {
	// OffsetSeqLogSuite "OffsetMap golden file compatibility test": latest
	// batch 3, offsetsMap == Map("0" -> 3), watermark 0, timestamp 1758651405232.
	seq, err := DecodeOffsetSeq(sparkFile(t, "offset-map/3"))
	if err != nil {
		t.Fatal(err)
	}
	if seq.Version != 2 || len(seq.Sources) != 1 || seq.Sources[0] != (OffsetEntry{ID: "0", JSON: "3", Present: true}) {
		t.Fatalf("got %+v", seq)
	}
	if seq.Metadata.BatchWatermarkMs != 0 || seq.Metadata.BatchTimestampMs != 1758651405232 || seq.Metadata.Conf["spark.sql.shuffle.partitions"] != "5" {
		t.Fatalf("metadata %+v", seq.Metadata)
	}
	// offsets without the metadata file: SPARK-55058 → inconsistent
	ms := memstore.New()
	for _, n := range []string{"0", "1", "2", "3"} {
		put(t, ms, "offsets/"+n, sparkFile(t, "offset-map/"+n))
	}
	r := inspect(t, ms, Options{})
	if r.Status != StatusInconsistent || !eqPtr(r.LatestOffsetsBatch, i64(3)) || r.Format.OffsetLogVersion != 2 {
		t.Errorf("status %s L %s format %+v", r.Status, fmtPtr(r.LatestOffsetsBatch), r.Format)
	}
	if !hasFinding(r, SeverityError, FindingMetadataMissing, MetadataKey) {
		t.Errorf("want metadata-missing, got %+v", r.Findings)
	}
	if len(r.Sources) != 1 || r.Sources[0].ID != "0" || r.Sources[0].Offset.Kind != OffsetLong || *r.Sources[0].Offset.Value != 3 {
		t.Errorf("sources %+v", r.Sources)
	}
	// semantic round trip
	again, err := DecodeOffsetSeq(must(seq.Encode()))
	if err != nil || !offsetSeqEqual(seq, again) {
		t.Errorf("round trip: %+v %v", again, err)
	}
}

func TestCommitLogGolden(t *testing.T) {
	// CommitLogSuite "Basic Commit Log V1 SerDe": CommitMetadata(1), version 1.
	raw1 := sparkFile(t, "testCommitLogV1/testCommitLog")
	c1, err := DecodeCommit(raw1)
	if err != nil || c1.Version != 1 || c1.NextBatchWatermarkMs != 1 || c1.NoWatermark || c1.StateUniqueIDs != nil {
		t.Fatalf("v1 = %+v, %v", c1, err)
	}
	if got := must(c1.Encode()); !bytes.Equal(got, bytes.TrimSuffix(raw1, []byte("\n"))) {
		t.Errorf("v1 encode %q, want %q", got, raw1)
	}
	// "Basic Commit Log V2 SerDe - nonempty stateUniqueIds": round trip.
	raw2 := sparkFile(t, "testCommitLogV2/testCommitLog")
	c2, err := DecodeCommit(raw2)
	if err != nil || c2.Version != 2 {
		t.Fatalf("v2 = %+v, %v", c2, err)
	}
	want := map[int64][][]string{
		0: {{"unique_id1", "unique_id2"}, {"unique_id3", "unique_id4"}},
		1: {{"unique_id5", "unique_id6"}, {"unique_id7", "unique_id8"}},
	}
	if !maps.EqualFunc(c2.StateUniqueIDs, want, func(a, b [][]string) bool {
		return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
	}) {
		t.Errorf("stateUniqueIds %v, want %v", c2.StateUniqueIDs, want)
	}
	if got := must(c2.Encode()); !bytes.Equal(got, bytes.TrimSuffix(raw2, []byte("\n"))) {
		t.Errorf("v2 encode %q, want %q", got, raw2)
	}
}

func TestFileSinkLogSpark210(t *testing.T) {
	// FileStreamSinkLogSuite "read Spark 2.1.0 log format": allFiles = /a/b/0…/a/b/9,
	// /a/b/9 with blockReplication 3 and blockSize 200; 7.compact → interval 8.
	st := sparkStore(t, "file-sink-log-version-2.1.0")
	files, latest, err := ReadFileSinkLog(context.Background(), st, "")
	if err != nil {
		t.Fatal(err)
	}
	if latest != 9 || len(files) != 10 {
		t.Fatalf("latest %d, %d files", latest, len(files))
	}
	for i, f := range files {
		if f.Path != "/a/b/"+strconv.Itoa(i) || f.Action != SinkActionAdd || f.IsDir {
			t.Errorf("file %d = %+v", i, f)
		}
	}
	if f := files[9]; f.BlockReplication != 3 || f.BlockSize != 200 {
		t.Errorf("/a/b/9 = %+v, want blockReplication 3, blockSize 200", f)
	}
	if got := DeriveCompactInterval(10, 7); got != 8 {
		t.Errorf("deriveCompactInterval(10, 7) = %d, want 8", got)
	}
	// as the output directory of a file sink next to a checkpoint whose
	// batch 9 is in flight: the sink already holds batch 9
	out := memCopy(t, "file-sink-log-version-2.1.0", SinkMetadataDir+"/")
	ck := memstore.New()
	put(t, ck, "metadata", StreamMetadata{ID: "q"}.Encode())
	for b := int64(8); b <= 9; b++ {
		put(t, ck, OffsetsKey(b), must(OffsetSeq{Metadata: &OffsetSeqMetadata{}, Sources: []OffsetEntry{{JSON: "1", Present: true}}}.Encode()))
	}
	put(t, ck, CommitKey(8), must(CommitMetadata{}.Encode()))
	r := inspect(t, ck, Options{Sink: out})
	if r.Sink == nil || !eqPtr(r.Sink.LatestBatch, i64(9)) || r.Sink.CompactInterval != 8 || !r.Sink.CommittedLatestOffsets || r.Sink.Files != 3 {
		t.Fatalf("sink %+v", r.Sink)
	}
	if r.Status != StatusInFlight || !strings.Contains(r.Resume.Note, "already committed batch 9") {
		t.Errorf("status %s, note %q", r.Status, r.Resume.Note)
	}
	// encode round trip of one file
	es, err := DecodeFileSinkLog(sparkFile(t, "file-sink-log-version-2.1.0/7.compact"))
	if err != nil || len(es) != 8 {
		t.Fatalf("7.compact: %d entries, %v", len(es), err)
	}
	if got := must(EncodeFileSinkLog(es)); !bytes.Equal(got, bytes.TrimSuffix(sparkFile(t, "file-sink-log-version-2.1.0/7.compact"), []byte("\n"))) {
		t.Errorf("encode 7.compact:\n%s", got)
	}
}

func TestFileSourceLogSpark210(t *testing.T) {
	// FileStreamSourceSuite "FileStreamSourceLog - read Spark 2.1.0 log format".
	files, latest, err := ReadFileSourceLog(context.Background(), sparkStore(t, "file-source-log-version-2.1.0"), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []FileEntry{
		{"/a/b/0", 1480730949000, 0}, {"/a/b/1", 1480730950000, 1}, {"/a/b/2", 1480730950000, 2},
		{"/a/b/3", 1480730950000, 3}, {"/a/b/4", 1480730951000, 4},
	}
	if latest != 4 || !slices.Equal(files, want) {
		t.Fatalf("latest %d files %+v", latest, files)
	}
	// as sources/0 of a checkpoint whose batch 4 reads log batches 3..4
	ms := memCopy(t, "file-source-log-version-2.1.0", "sources/0/")
	put(t, ms, "metadata", StreamMetadata{ID: "q"}.Encode())
	for b := int64(3); b <= 4; b++ {
		put(t, ms, OffsetsKey(b), must(OffsetSeq{Metadata: &OffsetSeqMetadata{}, Sources: []OffsetEntry{{JSON: EncodeFileSourceOffset(b), Present: true}}}.Encode()))
	}
	put(t, ms, CommitKey(3), must(CommitMetadata{}.Encode()))
	r := inspect(t, ms, Options{})
	if len(r.Sources) != 1 || r.Sources[0].Kind != "file" || r.Sources[0].Log == nil || r.Sources[0].Log.Kind != SourceLogFile ||
		!eqPtr(r.Sources[0].Log.LatestCompact, i64(2)) || r.Sources[0].Log.Entries != 1 || r.Sources[0].Log.Files != 3 {
		t.Fatalf("sources %+v / %+v", r.Sources, r.Sources[0].Log)
	}
	if hasFinding(r, SeverityError, FindingSourceLogMissing, "") {
		t.Errorf("log batches 3..4 exist: %+v", r.Findings)
	}
	// the log batch 4 that batch 4 reads is gone
	del(t, ms, "sources/0/4")
	r = inspect(t, ms, Options{})
	if !hasFinding(r, SeverityError, FindingSourceLogMissing, "sources/0/4") {
		t.Errorf("want source-log-missing for sources/0/4: %+v", r.Findings)
	}
}

func TestFileSourceOffsetSpark210(t *testing.T) {
	// FileStreamSourceSuite: both forms parse to FileStreamSourceOffset(345).
	for _, f := range []string{"file-source-offset-version-2.1.0-json.txt", "file-source-offset-version-2.1.0-long.txt"} {
		n, err := DecodeFileSourceOffset(string(sparkFile(t, f)))
		if err != nil || n != 345 {
			t.Errorf("%s: %d, %v", f, n, err)
		}
	}
	if got := EncodeFileSourceOffset(345); got != strings.TrimSpace(string(sparkFile(t, "file-source-offset-version-2.1.0-json.txt"))) {
		t.Errorf("encode %s", got)
	}
}

func TestQueryMetadataSpark210(t *testing.T) {
	// StreamMetadataSuite "read Spark 2.1.0 format": pretty-printed JSON.
	m, err := DecodeStreamMetadata(sparkFile(t, "query-metadata-logs-version-2.1.0.txt"))
	if err != nil || m.ID != "d366a8bf-db79-42ca-b5a4-d9ca0a11d63e" {
		t.Fatalf("%+v %v", m, err)
	}
	if got := string(m.Encode()); got != `{"id":"d366a8bf-db79-42ca-b5a4-d9ca0a11d63e"}` {
		t.Errorf("encode %s", got)
	}
}

func TestKafkaSpark210(t *testing.T) {
	// KafkaMicroBatchSourceSuite (SPARK-19517): one leading byte, no version.
	raw := sparkFile(t, "kafka/kafka-source-initial-offset-version-2.1.0.bin")
	if raw[0] != 0x32 {
		t.Fatalf("leading byte %#x", raw[0])
	}
	m, err := DecodeKafkaInitialOffsets(raw)
	want := map[string]map[int32]int64{"kafka-initial-offset-2-1-0": {0: 0, 1: 1, 2: 2}}
	if err != nil || !maps.EqualFunc(m, want, maps.Equal) {
		t.Fatalf("%v %v", m, err)
	}
	info, err := ClassifySourceLogFile(raw)
	if err != nil || info.Kind != SourceLogKafkaInitial || len(info.Initial) != 3 {
		t.Errorf("classify %+v %v", info, err)
	}
	again, err := DecodeKafkaInitialOffsets(EncodeKafkaInitialOffsets(m))
	if err != nil || !maps.EqualFunc(again, want, maps.Equal) {
		t.Errorf("round trip %v %v", again, err)
	}
	// KafkaSourceOffsetSuite "read Spark 2.1.0 offset format".
	k, err := DecodeKafkaOffsets(string(sparkFile(t, "kafka/kafka-source-offset-version-2.1.0.txt")))
	want = map[string]map[int32]int64{"topic1": {0: 456, 1: 789}, "topic2": {0: 0}}
	if err != nil || !maps.EqualFunc(k, want, maps.Equal) {
		t.Fatalf("%v %v", k, err)
	}
	if got := EncodeKafkaOffsets(k); got != `{"topic1":{"0":456,"1":789},"topic2":{"0":0}}` {
		t.Errorf("encode %s", got)
	}
}

// Every file of the golden checkpoints decodes with the codec its place in
// the layout names, and re-encodes: byte for byte where Spark's writer is
// deterministic (commits, metadata, operator metadata v1, schema v1/v2),
// to the same value otherwise (offsets: Spark's conf order is a hash order).
func TestGoldenFilesRoundTrip(t *testing.T) {
	counts := map[entryKind]int{}
	walkSpark(t, func(rel string, data []byte) {
		i := strings.Index(rel, "/offsets/")
		for _, marker := range []string{"/offsets/", "/commits/", "/state/", "/sources/"} {
			if j := strings.Index(rel, marker); j >= 0 && (i < 0 || j < i) {
				i = j
			}
		}
		if j := strings.LastIndex(rel, "/metadata"); j >= 0 && strings.HasSuffix(rel, "/metadata") && !strings.Contains(rel, "/state/") {
			i = j
		}
		if i < 0 {
			return
		}
		key := rel[i+1:]
		e := classify(attrs(key, data))
		counts[e.kind]++
		trimmed := bytes.TrimSuffix(data, []byte("\n"))
		switch e.kind {
		case entMetadata:
			m, err := DecodeStreamMetadata(data)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
			} else if !bytes.Equal(m.Encode(), trimmed) && !bytes.Contains(data, []byte("\n  ")) {
				t.Errorf("%s: encode %s", rel, m.Encode())
			}
		case entOffsets:
			seq, err := DecodeOffsetSeq(data)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				return
			}
			again, err := DecodeOffsetSeq(must(seq.Encode()))
			if err != nil || !offsetSeqEqual(seq, again) {
				t.Errorf("%s: round trip %v", rel, err)
			}
		case entCommit:
			c, err := DecodeCommit(data)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
			} else if got := must(c.Encode()); !bytes.Equal(got, trimmed) {
				t.Errorf("%s: encode %q, want %q", rel, got, trimmed)
			}
		case entOpMetaV1, entOpMetaV2:
			m, err := DecodeOperatorMetadata(data)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
			} else if m.Version == 1 && !bytes.Equal(must(m.Encode()), trimmed) {
				t.Errorf("%s: encode %s", rel, must(m.Encode()))
			}
		case entSchema, entSchemaV3:
			s, err := DecodeStateSchema(data)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
			} else if got := must(s.Encode()); !bytes.Equal(got, data) {
				t.Errorf("%s: re-encoded schema v%d differs", rel, s.Version)
			}
		case entSourceLog:
			if _, err := ClassifySourceLogFile(data); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		case entStateFile:
			var err error
			switch e.file.Kind {
			case KindDelta:
				_, err = CountDelta("", data, 0)
			case KindSnapshot:
				_, err = CountSnapshot("", data, 0)
			case KindChangelog:
				_, err = DecodeChangelog("", data, 0)
			case KindZip:
				_, err = DecodeRocksDBZip(data)
			}
			if err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		}
	})
	// SPARK-FORMAT: 430 deltas, 102 snapshots, 488 changelogs are LZ4-framed
	for k, min := range map[entryKind]int{entStateFile: 1020, entOffsets: 60, entCommit: 50, entSchema: 35, entOpMetaV1: 14, entOpMetaV2: 1, entSchemaV3: 1, entMetadata: 20} {
		if counts[k] < min {
			t.Errorf("kind %d: %d files checked, want ≥ %d", k, counts[k], min)
		}
	}
}

// Every Hadoop .crc sidecar matches its file, but for the two stale ones
// INDEX.md names; EncodeHadoopCRC rebuilds the matching ones byte for byte.
func TestGoldenHadoopCRC(t *testing.T) {
	stale := map[string]bool{
		"checkpoint-version-4.0.0-tws-unsaferow/offsets/.0.crc": true,
		"checkpoint-version-4.0.0-tws-unsaferow/offsets/.1.crc": true,
	}
	n := 0
	walkSpark(t, func(rel string, data []byte) {
		target, ok := hadoopCRCTarget(rel)
		if !ok {
			return
		}
		n++
		c, err := DecodeHadoopCRC(data)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return
		}
		main := sparkFile(t, target)
		err = c.Verify(main)
		if stale[rel] {
			var cm *ChecksumMismatch
			if !errors.As(err, &cm) || !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: stale sidecar verified: %v", rel, err)
			}
			return
		}
		if err != nil {
			t.Errorf("%s: %v", rel, err)
		}
		if !bytes.Equal(EncodeHadoopCRC(main), data) {
			t.Errorf("%s: EncodeHadoopCRC differs", rel)
		}
	})
	// INDEX.md counts 583 over Spark's whole resource folder; this copy
	// holds 489 of them (MANIFEST.tsv)
	if n != 489 {
		t.Errorf("%d .crc files, want 489", n)
	}
}

// The testdata copy matches MANIFEST.tsv, and every top-level entry of
// testdata/spark has a test here.
func TestGoldenManifest(t *testing.T) {
	f, err := os.Open(sparkPath("MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 4 {
			t.Fatalf("bad manifest line %q", sc.Text())
		}
		sum := sha256.Sum256(sparkFile(t, cols[0]))
		if hex.EncodeToString(sum[:]) != cols[3] {
			t.Errorf("%s: sha256 differs from MANIFEST.tsv", cols[0])
		}
		listed[cols[0]] = true
	}
	walkSpark(t, func(rel string, _ []byte) {
		if !listed[rel] && rel != "MANIFEST.tsv" && rel != "INDEX.md" {
			t.Errorf("%s is not in MANIFEST.tsv", rel)
		}
	})
	covered := map[string]bool{
		"INDEX.md": true, "MANIFEST.tsv": true, // TestGoldenManifest
		"file-sink-log-version-2.1.0":               true, // TestFileSinkLogSpark210
		"file-source-log-version-2.1.0":             true, // TestFileSourceLogSpark210
		"file-source-offset-version-2.1.0-json.txt": true, // TestFileSourceOffsetSpark210
		"file-source-offset-version-2.1.0-long.txt": true,
		"kafka":                                 true, // TestKafkaSpark210 + the 2.4.3 case
		"offset-log-version-2.1.0":              true, // TestOffsetLogSpark210
		"offset-map":                            true, // TestOffsetMapV2
		"query-metadata-logs-version-2.1.0.txt": true, // TestQueryMetadataSpark210
		"testCommitLogV1":                       true, // TestCommitLogGolden
		"testCommitLogV2":                       true,
	}
	for _, c := range sparkCases {
		covered[strings.Split(c.dir, "/")[0]] = true
	}
	des, err := os.ReadDir(sparkRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if !covered[de.Name()] {
			t.Errorf("testdata/spark/%s has no test case", de.Name())
		}
	}
	// and every checkpoint directory below the grouping folders
	for _, group := range []string{"checkpoint-version-4.0.0/hdfs", "checkpoint-version-4.0.0/rocksdb", "checkpoint-version-4.0.0-checkpoint-v2/rocksdb", "kafka"} {
		des, _ := os.ReadDir(sparkPath(group))
		for _, de := range des {
			if !de.IsDir() {
				continue
			}
			dir := group + "/" + de.Name()
			if !slices.ContainsFunc(sparkCases, func(c sparkCase) bool { return c.dir == dir }) {
				t.Errorf("testdata/spark/%s has no Inspect case", dir)
			}
		}
	}
}

// walkSpark calls fn for every file of the golden checkpoints (dotfiles
// too), by slash path under sparkRoot, in the order of those paths.
func walkSpark(tb testing.TB, fn func(rel string, data []byte)) {
	tb.Helper()
	files, err := filetree.Read(sparkRoot)
	if err != nil {
		tb.Fatal(err)
	}
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		fn(rel, files[rel])
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func offsetSeqEqual(a, b *OffsetSeq) bool {
	if a.Version != b.Version || !slices.Equal(a.Sources, b.Sources) || (a.Metadata == nil) != (b.Metadata == nil) {
		return false
	}
	if a.Metadata == nil {
		return true
	}
	ma, mb := *a.Metadata, *b.Metadata
	return ma.BatchWatermarkMs == mb.BatchWatermarkMs && ma.BatchTimestampMs == mb.BatchTimestampMs &&
		maps.Equal(ma.Conf, mb.Conf) && ma.Epoch == mb.Epoch &&
		bytes.Equal(ma.SourceMetadataInfo, mb.SourceMetadataInfo) && bytes.Equal(ma.ControlBatchInfo, mb.ControlBatchInfo)
}

// Hostile names in a compactible log do not make readers loop or allocate
// without bound.
func TestCompactibleLogHugeIDs(t *testing.T) {
	ms := memstore.New()
	entry := must(EncodeFileSinkLog([]SinkFileStatus{{Path: "/a", Action: SinkActionAdd}}))
	put(t, ms, "_spark_metadata/999999999999999988.compact", entry)
	put(t, ms, "_spark_metadata/1500000000000000000", entry)
	if _, _, err := ReadFileSinkLog(context.Background(), ms, SinkMetadataDir); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("err = %v", err)
	}
	if got := DeriveCompactInterval(10, 999999999999999988); got <= 0 {
		t.Errorf("interval %d", got)
	}
	ck := base(t).st
	put(t, ck, "sources/0/9223372036854775806.compact", []byte("v1\n"))
	put(t, ck, OffsetsKey(4), must(OffsetSeq{Metadata: &OffsetSeqMetadata{}, Sources: []OffsetEntry{{JSON: EncodeFileSourceOffset(1 << 62), Present: true}}}.Encode()))
	inspect(t, ck, Options{Sink: ms})
}

// TestReadFileSinkLogTail: a sink log that starts after batch 0 (a run
// restored at a boundary) reads from its latest compaction file, or from
// its first batch, to its latest; a gap is an error naming the batch, and
// the whole-log reader refuses the same log.
func TestReadFileSinkLogTail(t *testing.T) {
	ctx := context.Background()
	write := func(st gateway.Store, name string, paths ...string) {
		var es []SinkFileStatus
		for _, p := range paths {
			es = append(es, SinkFileStatus{Path: p, Action: SinkActionAdd})
		}
		data, err := EncodeFileSinkLog(es)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, SinkMetadataDir+"/"+name, data, gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
	paths := func(es []SinkFileStatus) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Path)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		files  [][]string // name, then its paths
		want   []string
		latest int64
		gap    int64 // -1: none
	}{
		{"no compaction", [][]string{{"57", "a"}, {"58", "b"}}, []string{"a", "b"}, 58, -1},
		{"from the compaction", [][]string{{"57", "a"}, {"58", "b"}, {"59.compact", "a", "b", "c"}, {"60", "d"}}, []string{"a", "b", "c", "d"}, 60, -1},
		{"a gap", [][]string{{"57", "a"}, {"59", "c"}}, nil, 59, 58},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := memstore.New()
			for _, f := range tc.files {
				write(st, f[0], f[1:]...)
			}
			got, latest, err := ReadFileSinkLogTail(ctx, st, SinkMetadataDir)
			if tc.gap >= 0 {
				if !errors.Is(err, gateway.ErrNotFound) || !strings.Contains(err.Error(), fmt.Sprintf("batch %d", tc.gap)) {
					t.Fatalf("err = %v, want batch %d missing", err, tc.gap)
				}
				return
			}
			if err != nil || latest != tc.latest || !slices.Equal(paths(got), tc.want) {
				t.Fatalf("got %v latest %d err %v, want %v latest %d", paths(got), latest, err, tc.want, tc.latest)
			}
			if _, _, err := ReadFileSinkLog(ctx, st, SinkMetadataDir); tc.name == "no compaction" && err == nil {
				t.Fatal("the whole-log reader read a log that starts at batch 57")
			}
		})
	}
	if _, _, err := ReadFileSinkLogTail(ctx, memstore.New(), SinkMetadataDir); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("an absent log: %v, want ErrNotFound", err)
	}
}

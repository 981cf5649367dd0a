package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestXXH32(t *testing.T) {
	// reference values of xxHash32
	for _, c := range []struct {
		in   string
		seed uint32
		want uint32
	}{
		{"", 0, 0x02CC5D05},
		{"a", 0, 0x550D7456},
		{"abc", 0, 0x32D153FF},
		{"Nobody inspects the spammish repetition", 0, 0xE2293B2F},
	} {
		if got := xxh32([]byte(c.in), c.seed); got != c.want {
			t.Errorf("xxh32(%q, %d) = %08x, want %08x", c.in, c.seed, got, c.want)
		}
	}
}

func TestLZ4BlockRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("checkpoint state "), 5000) // 85 000 bytes: 3 blocks
	noise := make([]byte, 40000)
	for i := range noise {
		noise[i] = byte(i*7919 + i>>3) // incompressible enough for a raw block
	}
	for _, data := range [][]byte{nil, []byte("x"), big, noise} {
		enc := EncodeLZ4Block(data)
		got, err := DecodeLZ4Block(enc, 0)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: %v", len(data), err)
		}
		// concatenation mode: two streams read as one
		got, err = DecodeLZ4Block(append(enc, enc...), 0)
		if err != nil || !bytes.Equal(got, append(append([]byte{}, data...), data...)) {
			t.Fatalf("concatenated %d bytes: %v", len(data), err)
		}
	}
	if _, err := DecodeLZ4Block(EncodeLZ4Block(big), 1000); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit: %v", err)
	}
	// every truncation is an error, never a panic; without the end block it
	// is ErrTruncated
	enc := EncodeLZ4Block(big)
	for n := range len(enc) {
		_, err := DecodeLZ4Block(enc[:n], 0)
		if err == nil {
			t.Fatalf("cut at %d decoded", n)
		}
		if n > 0 && !errors.Is(err, ErrTruncated) {
			t.Fatalf("cut at %d: %v, want ErrTruncated", n, err)
		}
	}
	bad := bytes.Clone(enc)
	bad[30] ^= 1
	if _, err := DecodeLZ4Block(bad, 0); !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTruncated) {
		t.Errorf("flipped byte: %v", err)
	}
}

func TestRecordStreams(t *testing.T) {
	recs := []StateRecord{{Key: []byte("k1"), Value: []byte("v1")}, {Key: []byte("k2"), Delete: true}, {Key: []byte("k3"), Value: nil}}
	c, err := CountDelta("", EncodeDelta(recs), 0)
	if err != nil || c != (RecordCounts{Puts: 2, Deletes: 1}) {
		t.Fatalf("delta %+v %v", c, err)
	}
	if _, err := EncodeSnapshot(recs); err == nil {
		t.Error("a snapshot with a delete must not encode")
	}
	if _, err := CountSnapshot("", EncodeDelta(recs), 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a delete in a snapshot: %v", err)
	}
	if _, err := CountDelta("snappy", []byte("\x82SNAPPY\x00"), 0); !errors.Is(err, ErrUnsupportedCodec) {
		t.Errorf("snappy: %v", err)
	}
	if _, err := CountDelta("", []byte("\x82SNAPPY\x00"), 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("not lz4 with the lz4 codec: %v", err)
	}
	// trailing bytes after the end marker
	raw := binary.BigEndian.AppendUint32(nil, 0xFFFFFFFF)
	if _, err := countKVRecords(append(raw, 0), true); !errors.Is(err, ErrCorrupt) {
		t.Errorf("trailing byte: %v", err)
	}
	if _, err := countKVRecords(binary.BigEndian.AppendUint32(nil, 0xFFFFFFFE), true); !errors.Is(err, ErrCorrupt) {
		t.Errorf("key size -2: %v", err)
	}
	for _, name := range []string{"org.apache.spark.io.ZStdCompressionCodec", "ZSTD", "", "org.apache.spark.io.LZ4CompressionCodec"} {
		if got := NormalizeCodec(name); got != map[string]string{"org.apache.spark.io.ZStdCompressionCodec": "zstd", "ZSTD": "zstd", "": "lz4", "org.apache.spark.io.LZ4CompressionCodec": "lz4"}[name] {
			t.Errorf("NormalizeCodec(%q) = %q", name, got)
		}
	}
}

// changelogStream builds a decompressed changelog of a version.
func changelogStream(t *testing.T, version int, lineage string, puts, deletes, merges int) []byte {
	t.Helper()
	var b []byte
	if version > 1 {
		b, _ = appendUTF(b, "v"+string(rune('0'+version)))
	}
	if version == 3 || version == 4 {
		b, _ = appendUTF(b, lineage)
	}
	typed := version == 2 || version == 4
	rec := func(typ byte, del bool) {
		if typed {
			b = append(b, typ)
		}
		b = appendKV(b, []byte{typ, 1, 2}, []byte{3}, del)
	}
	for range puts {
		rec(recordPut, false)
	}
	for range deletes {
		rec(recordDelete, true)
	}
	for range merges {
		rec(recordMerge, false)
	}
	if typed {
		return append(b, recordEOF)
	}
	return binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
}

func TestChangelogVersions(t *testing.T) {
	lin := `[{"version":3,"checkpointUniqueId":"a"},{"version":4,"checkpointUniqueId":"b"}]`
	for v := 1; v <= 4; v++ {
		merges := 0
		if v == 2 || v == 4 {
			merges = 1
		}
		cl, err := DecodeChangelog("lz4", EncodeLZ4Block(changelogStream(t, v, lin, 2, 1, merges)), 0)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if cl.Version != v || cl.Counts != (RecordCounts{Puts: 2, Deletes: 1, Merges: int64(merges)}) {
			t.Errorf("v%d: %+v", v, cl)
		}
		if (v >= 3) != (len(cl.Lineage) == 2) {
			t.Errorf("v%d lineage %+v", v, cl.Lineage)
		}
	}
	var b []byte
	b, _ = appendUTF(b, "v5")
	_, err := DecodeChangelog("", EncodeLZ4Block(append(b, 0)), 0)
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Found != 5 || ve.Max != 4 {
		t.Errorf("v5: %v", err)
	}
	// an empty v1 changelog starts with ffff: read as v1
	cl, err := DecodeChangelog("", EncodeLZ4Block(binary.BigEndian.AppendUint32(nil, 0xFFFFFFFF)), 0)
	if err != nil || cl.Version != 1 {
		t.Errorf("empty v1: %+v %v", cl, err)
	}
}

func TestSchemaEncodeDecode(t *testing.T) {
	long := `{"type":"struct","fields":[` + strings.Repeat(`{"name":"é\u0000𝄞","type":"string","nullable":true,"metadata":{}},`, 1200) + `{"name":"z","type":"long","nullable":false,"metadata":{}}]}`
	id1, id2 := int16(0), int16(7)
	for _, s := range []StateSchema{
		{Version: 1, ColumnFamilies: []ColumnFamilySchema{{Name: "default", KeySchema: `{"type":"struct","fields":[]}`, ValueSchema: `{}`}}},
		{Version: 2, ColumnFamilies: []ColumnFamilySchema{{Name: "default", KeySchema: long, ValueSchema: `{"a":"ü"}`}}},
		{Version: 3, ColumnFamilies: []ColumnFamilySchema{
			{Name: "countState", KeySchema: `{}`, ValueSchema: long, KeyStateEncoderSpec: `{"keyStateEncoderType":"NoPrefixKeyStateEncoderSpec"}`, UserKeyEncoderSchema: "{    }"},
			{Name: "$ttl", KeySchema: `{}`, ValueSchema: `{}`, KeyStateEncoderSpec: `{}`, UserKeyEncoderSchema: "{}"}}},
		{Version: 3, ColumnFamilies: []ColumnFamilySchema{
			{Name: "ids", KeySchemaID: &id1, ValueSchemaID: &id2, KeySchema: `{}`, ValueSchema: `[]`, KeyStateEncoderSpec: `{}`, UserKeyEncoderSchema: "{}"}}},
	} {
		enc, err := s.Encode()
		if err != nil {
			t.Fatalf("v%d: %v", s.Version, err)
		}
		got, err := DecodeStateSchema(enc)
		if err != nil {
			t.Fatalf("v%d: %v", s.Version, err)
		}
		if got.Version != s.Version || len(got.ColumnFamilies) != len(s.ColumnFamilies) {
			t.Fatalf("v%d: %+v", s.Version, got)
		}
		for i, cf := range got.ColumnFamilies {
			w := s.ColumnFamilies[i]
			if cf.Name != w.Name || cf.KeySchema != w.KeySchema || cf.ValueSchema != w.ValueSchema || cf.UserKeyEncoderSchema != w.UserKeyEncoderSchema ||
				(cf.KeySchemaID == nil) != (w.KeySchemaID == nil) || (cf.KeySchemaID != nil && *cf.ValueSchemaID != *w.ValueSchemaID) {
				t.Errorf("v%d family %d: %+v", s.Version, i, cf)
			}
		}
		step := max(1, len(enc)/200)
		for n := 0; n < len(enc); n += step {
			if _, err := DecodeStateSchema(enc[:n]); err == nil {
				t.Fatalf("v%d cut at %d decoded", s.Version, n)
			}
		}
	}
	b, _ := appendUTF(nil, "v4")
	if _, err := DecodeStateSchema(b); !errors.Is(err, ErrUnsupportedVersion) || !strings.Contains(err.Error(), "v3") {
		t.Errorf("v4: %v", err)
	}
}

func TestOffsetSeqCodec(t *testing.T) {
	seq := OffsetSeq{Metadata: &OffsetSeqMetadata{BatchWatermarkMs: 5, BatchTimestampMs: 6, Conf: map[string]string{"b": "2", "a": "<1>"}, Epoch: 7},
		Sources: []OffsetEntry{{JSON: `{"logOffset":3}`, Present: true}, {}}}
	enc := must(seq.Encode())
	want := "v1\n{\"batchWatermarkMs\":5,\"batchTimestampMs\":6,\"conf\":{\"a\":\"\\u003c1\\u003e\",\"b\":\"2\"},\"ckgateEpoch\":7}\n{\"logOffset\":3}\n-"
	if string(enc) != want {
		t.Errorf("encode\n%s\nwant\n%s", enc, want)
	}
	got, err := DecodeOffsetSeq(enc)
	if err != nil || !offsetSeqEqual(got, &OffsetSeq{Version: 1, Metadata: seq.Metadata, Sources: []OffsetEntry{{ID: "0", JSON: `{"logOffset":3}`, Present: true}, {ID: "1"}}}) {
		t.Fatalf("%+v %v", got, err)
	}
	// an empty metadata line, CRLF line ends, a trailing newline
	got, err = DecodeOffsetSeq([]byte("v1\r\n\r\n-\r\n"))
	if err != nil || got.Metadata != nil || len(got.Sources) != 1 || got.Sources[0].Present {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range []string{"", "v1", "x1\n{}", "v0\n{}", "v1\n{", "v2\n\n0:1", "v2\n{}\nnocolon", "v-1\n{}"} {
		if _, err := DecodeOffsetSeq([]byte(bad)); err == nil || !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := DecodeOffsetSeq([]byte("v3\n{}")); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("v3: %v", err)
	}
	if _, err := DecodeOffsetSeq([]byte("v99999999999999999999\n{}")); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("huge version: %v", err)
	}
	if _, err := (OffsetSeq{Sources: []OffsetEntry{{JSON: "a\nb", Present: true}}}).Encode(); err == nil {
		t.Error("a multi-line offset must not encode")
	}
	v2 := OffsetSeq{Version: 2, Metadata: &OffsetSeqMetadata{}, Sources: []OffsetEntry{{ID: "src-a", JSON: "3", Present: true}, {ID: "b"}}}
	got, err = DecodeOffsetSeq(must(v2.Encode()))
	if err != nil || got.Version != 2 || got.Sources[0].ID != "src-a" || got.Sources[1].Present {
		t.Errorf("v2 %+v %v", got, err)
	}
}

func TestSourceOffsets(t *testing.T) {
	for _, c := range []struct {
		json, kind string
	}{
		{"42", OffsetLong},
		{`{"logOffset":7}`, OffsetFile},
		{`{"t":{"0":1,"1":-2}}`, OffsetKafka},
		{`{"0":{"value":10,"runTimeMs":99},"1":{"value":11,"runTimeMs":99}}`, OffsetRate},
		{`{"offset":100,"timestamp":1700000000000}`, OffsetRate},
		{`{"shards":["a"]}`, OffsetUnknown},
		{`[1]`, OffsetUnknown},
		{``, OffsetUnknown},
	} {
		so := ParseSourceOffset(OffsetEntry{JSON: c.json, Present: true})
		if so.Kind != c.kind {
			t.Errorf("%s: kind %s, want %s", c.json, so.Kind, c.kind)
		}
	}
	if so := ParseSourceOffset(OffsetEntry{}); so.Kind != OffsetNone {
		t.Errorf("absent: %s", so.Kind)
	}
	so := ParseSourceOffset(OffsetEntry{JSON: `{"0":{"value":10,"runTimeMs":99}}`, Present: true})
	if len(so.Rate) != 1 || *so.Rate[0].Partition != 0 || so.Rate[0].Value != 10 || so.Rate[0].RunTimeMs != 99 {
		t.Errorf("rate %+v", so.Rate)
	}
}

func TestCommitCodec(t *testing.T) {
	for _, c := range []struct {
		in   string
		want CommitMetadata
	}{
		{"v1\n{}", CommitMetadata{Version: 1, NoWatermark: true}},
		{"v1", CommitMetadata{Version: 1, NoWatermark: true}},
		{"v1\n{\"nextBatchWatermarkMs\":0,\"stateUniqueIds\":{}}", CommitMetadata{Version: 1, StateUniqueIDs: map[int64][][]string{}}},
		{"v1\n{\"nextBatchWatermarkMs\":3,\"ckgateEpoch\":2}\n", CommitMetadata{Version: 1, NextBatchWatermarkMs: 3, Epoch: 2}},
		{"v1\n{\"nextBatchWatermarkMs\":4}\nignored by Spark", CommitMetadata{Version: 1, NextBatchWatermarkMs: 4}},
	} {
		got, err := DecodeCommit([]byte(c.in))
		if err != nil || got.Version != c.want.Version || got.NoWatermark != c.want.NoWatermark || got.NextBatchWatermarkMs != c.want.NextBatchWatermarkMs ||
			got.Epoch != c.want.Epoch || (got.StateUniqueIDs == nil) != (c.want.StateUniqueIDs == nil) {
			t.Errorf("%q: %+v %v", c.in, got, err)
		}
		if enc := must(got.Encode()); c.in != "v1" && !strings.HasPrefix(c.in, string(enc)) {
			t.Errorf("%q: encode %q", c.in, enc)
		}
	}
	for _, bad := range []string{"", "v1\n{", "v1\n{\"stateUniqueIds\":{\"x\":[]}}", "1\n{}"} {
		if _, err := DecodeCommit([]byte(bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestLayoutNames(t *testing.T) {
	for _, c := range []struct {
		key  string
		kind entryKind
	}{
		{"metadata", entMetadata},
		{"offsets/12", entOffsets},
		{"offsets/.12.crc", entHadoopCRC},
		{"offsets/.12.0f1e.tmp", entTemp},
		{"offsets/12.tmp", entTemp},
		{"offsets/abc", entUnknown},
		{"offsets/-1", entUnknown},
		{"commits/0", entCommit},
		{"sources/0/3.compact", entSourceLog},
		{"state/0/_metadata/metadata", entOpMetaV1},
		{"state/0/_metadata/v2/4", entOpMetaV2},
		{"state/0/_stateSchema/default/0_2e8e", entSchemaV3},
		{"state/0/0/_metadata/schema", entSchema},
		{"state/0/0/left-keyToNumValues/_metadata/schema", entSchema},
		{"state/0/3/7.delta", entStateFile},
		{"state/0/3/7_ab-cd.changelog", entStateFile},
		{"state/0/3/right-keyToNumValues/7.snapshot", entStateFile},
		{"state/0/3/7.delta.crc", entJSONCRC},
		{"state/0/3/SSTs/000008-x.sst", entStateAux},
		{"state/0/3/left/logs/000008-x.log", entStateAux},
		{"state/0/3/7.zip.bak", entUnknown},
		{"_ckgate/writer", entWriter},
		{"_ckgate/plan.json", entPlan},
		{"_ckgate/effects/x", entCkgateOther},
		{".DS_Store", entDotfile},
	} {
		if got := classify(attrs(c.key, []byte{1})); got.kind != c.kind {
			t.Errorf("%s: kind %d, want %d", c.key, got.kind, c.kind)
		}
	}
	for _, bad := range []string{"7", "x.delta", "7_.delta", "-1.delta", "+1.delta", "7.deltas"} {
		if _, ok := ParseStateFileName(bad); ok {
			t.Errorf("%q parsed as a state file", bad)
		}
	}
	n, ok := ParseStateFileName("12_0a1b.changelog")
	if !ok || n.Version != 12 || n.UniqueID != "0a1b" || n.Kind != KindChangelog || n.String() != "12_0a1b.changelog" {
		t.Errorf("%+v %v", n, ok)
	}
	if HadoopCRCName("state/0/1/2.delta") != "state/0/1/.2.delta.crc" || OffsetsKey(3) != "offsets/3" || CommitKey(4) != "commits/4" ||
		SourceLogKey(1, 9, true) != "sources/1/9.compact" || SchemaKey("0", "left") != "state/0/0/left/_metadata/schema" ||
		OperatorMetadataV2Key("2", 5) != "state/2/_metadata/v2/5" {
		t.Error("key helpers")
	}
	if got := ValidBatches(9, 8); len(got) != 3 || got[0] != 7 {
		t.Errorf("ValidBatches(9, 8) = %v", got)
	}
	if !IsCompactionBatch(9, 10) || IsCompactionBatch(8, 10) {
		t.Error("IsCompactionBatch")
	}
}

func TestChecksumCodecs(t *testing.T) {
	data := bytes.Repeat([]byte{7}, 1300)
	c, err := DecodeHadoopCRC(EncodeHadoopCRC(data))
	if err != nil || c.BytesPerChecksum != 512 || len(c.Sums) != 3 || c.Verify(data) != nil {
		t.Fatalf("%+v %v", c, err)
	}
	if err := c.Verify(data[:1000]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("shorter file: %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("crc"), []byte("abc\x00\x00\x00\x02\x00"), []byte("crc\x00\x00\x00\x00\x00"), []byte("crc\x00\x00\x00\x02\x00\x01")} {
		if _, err := DecodeHadoopCRC(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	fc, err := DecodeFileChecksum([]byte(`{"algorithm":"CRC32C","value":-1,"mainFileSize":0}`))
	if err != nil || fc.Verify(nil) == nil {
		t.Errorf("crc32c of nothing is 0: %+v %v", fc, err)
	}
	fc.Value = castagnoliSum(data)
	fc.MainFileSize = int64(len(data))
	if err := fc.Verify(data); err != nil {
		t.Error(err)
	}
}

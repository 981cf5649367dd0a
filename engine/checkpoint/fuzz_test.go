package checkpoint

import (
	"bytes"
	"context"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway/memstore"
)

// Fuzz targets for every decoder, seeded with the real files of
// testdata/spark. Run one with, e.g.:
//
//	go test -run '^$' -fuzz '^FuzzOffsetSeq$' -fuzztime 20s ./engine/checkpoint/

// seed adds every testdata file whose relative path matches.
func seed(f *testing.F, match func(rel string) bool) {
	f.Helper()
	n := 0
	walkSpark(f, func(rel string, b []byte) {
		if match(rel) {
			f.Add(b)
			n++
		}
	})
	if n == 0 {
		f.Fatal("no seed file matched")
	}
}

func under(dir string) func(string) bool {
	return func(rel string) bool {
		i := strings.LastIndex(rel, "/")
		return i > 0 && strings.HasSuffix(rel[:i], dir) && !strings.HasPrefix(rel[i+1:], ".")
	}
}

func suffix(s string) func(string) bool {
	return func(rel string) bool { return strings.HasSuffix(rel, s) && !strings.HasPrefix(filepath.Base(rel), ".") }
}

// decompressed seeds the decoded content of lz4 files.
func decompressed(f *testing.F, ext string) {
	f.Helper()
	walkSpark(f, func(rel string, b []byte) {
		if strings.HasSuffix(rel, ext) && !strings.HasPrefix(path.Base(rel), ".") {
			if raw, err := DecodeLZ4Block(b, 0); err == nil {
				f.Add(raw)
			}
		}
	})
}

func FuzzOffsetSeq(f *testing.F) {
	seed(f, func(rel string) bool {
		return under("/offsets")(rel) || strings.HasPrefix(rel, "offset-log-version-2.1.0/") || strings.HasPrefix(rel, "offset-map/")
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, err := DecodeOffsetSeq(b)
		if err != nil {
			return
		}
		for _, e := range seq.Sources {
			ParseSourceOffset(e)
			DecodeFileSourceOffset(e.JSON)
			DecodeKafkaOffsets(e.JSON)
		}
		enc, err := seq.Encode()
		if err != nil {
			return // e.g. a source id with ':' cannot be written back
		}
		again, err := DecodeOffsetSeq(enc)
		if err != nil {
			t.Fatalf("re-decode of %q: %v", enc, err)
		}
		if again.Version != seq.Version || len(again.Sources) != len(seq.Sources) {
			t.Fatalf("round trip changed %+v into %+v", seq, again)
		}
	})
}

func FuzzCommit(f *testing.F) {
	seed(f, func(rel string) bool { return under("/commits")(rel) || strings.HasPrefix(rel, "testCommitLog") })
	f.Add([]byte("v1\n" + `{"nextBatchWatermarkMs":0,"ckgateEpoch":1,"ckgateProgress":{"inputRows":3,"durationMs":{"addBatch":1}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCommit(b)
		if err != nil {
			return
		}
		enc, err := c.Encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeCommit(enc)
		if err != nil || again.NextBatchWatermarkMs != c.NextBatchWatermarkMs || again.NoWatermark != c.NoWatermark || len(again.StateUniqueIDs) != len(c.StateUniqueIDs) {
			t.Fatalf("round trip %+v → %q → %+v, %v", c, enc, again, err)
		}
	})
}

func FuzzStreamMetadata(f *testing.F) {
	seed(f, func(rel string) bool {
		return strings.HasSuffix(rel, "/metadata") && !strings.Contains(rel, "/state/") || strings.HasPrefix(rel, "query-metadata")
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeStreamMetadata(b)
		if err != nil {
			return
		}
		if again, err := DecodeStreamMetadata(m.Encode()); err != nil || again.ID != m.ID {
			t.Fatalf("round trip %q: %v", m.ID, err)
		}
	})
}

func FuzzSourceLog(f *testing.F) {
	seed(f, func(rel string) bool {
		return strings.Contains(rel, "/sources/") || strings.HasPrefix(rel, "file-source-log") || strings.HasPrefix(rel, "kafka/kafka-source")
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		ClassifySourceLogFile(b)
		DecodeKafkaInitialOffsets(b)
		if es, err := DecodeFileSourceLog(b); err == nil {
			enc, err := EncodeFileSourceLog(es)
			if err != nil {
				t.Fatal(err)
			}
			if again, err := DecodeFileSourceLog(enc); err != nil || len(again) != len(es) {
				t.Fatalf("round trip: %v", err)
			}
		}
	})
}

func FuzzFileSinkLog(f *testing.F) {
	seed(f, func(rel string) bool { return strings.HasPrefix(rel, "file-sink-log") })
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := DecodeFileSinkLog(b)
		if err != nil {
			return
		}
		CompactSinkLog(es)
		enc, err := EncodeFileSinkLog(es)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := DecodeFileSinkLog(enc); err != nil || len(again) != len(es) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzOperatorMetadata(f *testing.F) {
	seed(f, func(rel string) bool {
		return strings.HasSuffix(rel, "_metadata/metadata") || under("_metadata/v2")(rel)
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeOperatorMetadata(b)
		if err != nil {
			return
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if again, err := DecodeOperatorMetadata(enc); err != nil || again.OperatorID != m.OperatorID || len(again.Stores) != len(m.Stores) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzStateSchema(f *testing.F) {
	seed(f, func(rel string) bool {
		return strings.HasSuffix(rel, "/_metadata/schema") || under("_stateSchema/default")(rel)
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeStateSchema(b)
		if err != nil {
			return
		}
		enc, err := s.Encode()
		if err != nil {
			return // a mix of families with and without schema ids
		}
		if again, err := DecodeStateSchema(enc); err != nil || len(again.ColumnFamilies) != len(s.ColumnFamilies) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzLZ4Block(f *testing.F) {
	seed(f, func(rel string) bool { return suffix(".delta")(rel) || suffix(".snapshot")(rel) })
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := DecodeLZ4Block(b, 1<<20)
		if err != nil {
			return
		}
		if again, err := DecodeLZ4Block(EncodeLZ4Block(out), 0); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzDeltaSnapshot(f *testing.F) {
	seed(f, func(rel string) bool { return suffix(".delta")(rel) || suffix(".snapshot")(rel) })
	f.Fuzz(func(t *testing.T, b []byte) {
		CountDelta("", b, 1<<20)
		CountSnapshot("lz4", b, 1<<20)
	})
}

// FuzzRecordStream fuzzes the decompressed record stream, which random
// bytes rarely reach through the lz4 checksums.
func FuzzRecordStream(f *testing.F) {
	decompressed(f, ".delta")
	decompressed(f, ".snapshot")
	f.Fuzz(func(t *testing.T, b []byte) {
		d, errD := countKVRecords(b, true)
		s, errS := countKVRecords(b, false)
		if errS == nil && (errD != nil || d != s || s.Deletes != 0) {
			t.Fatalf("a valid snapshot stream is a valid delta stream: %+v %v / %+v", d, errD, s)
		}
	})
}

func FuzzChangelog(f *testing.F) {
	seed(f, suffix(".changelog"))
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodeChangelog("", b, 1<<20)
	})
}

func FuzzChangelogStream(f *testing.F) {
	decompressed(f, ".changelog")
	f.Fuzz(func(t *testing.T, b []byte) {
		cl, err := decodeChangelogStream(b)
		if err == nil && (cl.Version < 1 || cl.Version > ChangelogMaxVersion) {
			t.Fatalf("version %d decoded", cl.Version)
		}
	})
}

func FuzzRocksDBZip(f *testing.F) {
	seed(f, suffix(".zip"))
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodeRocksDBZip(b)
		DecodeRocksDBCheckpointMetadata(b)
	})
}

func FuzzHadoopCRC(f *testing.F) {
	seed(f, func(rel string) bool {
		return strings.HasPrefix(filepath.Base(rel), ".") && strings.HasSuffix(rel, ".crc")
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeHadoopCRC(b)
		if err != nil {
			return
		}
		c.Verify(b)
		DecodeFileChecksum(b)
	})
}

func FuzzSourceOffset(f *testing.F) {
	for _, s := range []string{"345", `{"logOffset":345}`, `{"topic1":{"0":456,"1":789},"topic2":{"0":0}}`, `{"0":{"value":1,"runTimeMs":2}}`, `{"offset":1,"timestamp":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		so := ParseSourceOffset(OffsetEntry{JSON: string(b), Present: true})
		if so.Kind == OffsetKafka {
			m, err := DecodeKafkaOffsets(string(b))
			if err != nil {
				t.Fatal(err)
			}
			if again, err := DecodeKafkaOffsets(EncodeKafkaOffsets(m)); err != nil || len(again) != len(m) {
				t.Fatalf("round trip: %v", err)
			}
		}
	})
}

// FuzzInspect puts fuzzed bytes in the places Inspect reads and checks it
// never fails or panics on content.
func FuzzInspect(f *testing.F) {
	seed(f, func(rel string) bool {
		return strings.HasPrefix(rel, "checkpoint-version-3.3.0-streaming-deduplication/") && !strings.Contains(rel, "/.")
	})
	b := newBuilder(f)
	b.ops, b.parts = 1, 2
	b.start().batches(3)
	var keys []string
	files := map[string][]byte{}
	for a, err := range b.st.List(context.Background(), "") {
		if err != nil {
			f.Fatal(err)
		}
		keys = append(keys, a.Key)
		files[a.Key] = b.get(a.Key)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms := memstore.New()
		for i, k := range keys {
			v := files[k]
			if len(data) > 0 && i%len(data) == int(data[0])%len(keys)%max(1, len(data)) {
				v = data
			}
			put(t, ms, k, v)
		}
		put(t, ms, "offsets/2", data)
		put(t, ms, "state/0/1/3.delta", data)
		r, err := Inspect(context.Background(), ms, Options{})
		if err != nil {
			t.Fatalf("Inspect: %v", err)
		}
		if r.Status == "" {
			t.Fatal("no status")
		}
	})
}

func FuzzCkgateState(f *testing.F) {
	f.Add(encodeCkgateState(CkgateStateHeader{Version: 3, Depth: 1, Base: "2_ab.delta"}, []StateRecord{{Key: []byte("k"), Value: []byte("v")}, {Key: []byte("x"), Delete: true}}))
	f.Add(encodeCkgateState(CkgateStateHeader{Snapshot: true, Version: 1}, []StateRecord{{Key: []byte("k"), Value: []byte("v")}}))
	f.Add(append([]byte(ckgateStateMagic), make([]byte, 64)...)) // a sparse giant after the magic
	f.Fuzz(func(t *testing.T, b []byte) {
		h, c, err := DecodeCkgateState(b)
		prefix := b[:min(len(b), CkgateStateHeaderMax)]
		hh, herr := DecodeCkgateStateHeader(prefix)
		if err != nil {
			return
		}
		if herr != nil || hh != h {
			t.Fatalf("header from a prefix: %+v %v, whole file: %+v", hh, herr, h)
		}
		if h.Snapshot && (c.Deletes != 0 || h.Base != "") {
			t.Fatalf("snapshot with deletes or a base: %+v %+v", h, c)
		}
	})
}

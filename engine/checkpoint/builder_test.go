package checkpoint

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// builder writes a synthetic checkpoint, Spark-style by default (HDFS
// provider files <v>.delta / <v>.snapshot), or with unique-id state file
// names named by the commits (ckgate's engine, Spark's checkpoint v2).
type builder struct {
	t             testing.TB
	st            gateway.Store
	ops, parts    int
	snapshotEvery int64 // a snapshot every K versions (0: none)
	uids          bool  // <v>_<uid>.delta names and stateUniqueIds in commits
	crc           bool  // Hadoop .crc sidecars for every file
	conf          map[string]string
	epoch         uint64
	// ckgate: ckgate engine state files (CKGS, each naming its base), with
	// commits naming every partition's tip file; skip says which
	// partitions a batch leaves unchanged.
	ckgate bool
	skip   func(n int64, op, part int) bool
	tips   map[[2]int]string
}

func newBuilder(t testing.TB) *builder {
	return &builder{t: t, st: memstore.New(), ops: 2, parts: 3, snapshotEvery: 2,
		conf: map[string]string{ConfShufflePartitions: "3", ConfProviderClass: sparkProvider + "HDFSBackedStateStoreProvider"}}
}

func (b *builder) put(key string, data []byte) {
	b.t.Helper()
	put(b.t, b.st, key, data)
	if b.crc {
		put(b.t, b.st, HadoopCRCName(key), EncodeHadoopCRC(data))
	}
}

func uid(op, part int, v int64) string {
	return fmt.Sprintf("%08d-0000-4000-8000-%04d%04d%04d", v, op, part, 0)
}

// start writes metadata and operator metadata.
func (b *builder) start() *builder {
	b.conf[ConfShufflePartitions] = fmt.Sprint(b.parts)
	b.put(MetadataKey, StreamMetadata{ID: "3f0c1c52-0000-4000-8000-000000000001"}.Encode())
	for op := range b.ops {
		m := OperatorMetadata{Version: 1, OperatorID: int64(op), OperatorName: "stateStoreSave",
			Stores: []StoreMetadata{{Name: DefaultStore, NumPartitions: b.parts}}}
		b.put(OperatorMetadataKey(fmt.Sprint(op)), must(m.Encode()))
	}
	return b
}

// batch writes offsets/n, state version n+1 of every partition, and
// commits/n when commit is set.
func (b *builder) batch(n int64, commit bool) *builder {
	b.t.Helper()
	seq := OffsetSeq{Metadata: &OffsetSeqMetadata{BatchWatermarkMs: n * 1000, BatchTimestampMs: 1700000000000 + n, Conf: b.conf, Epoch: b.epoch},
		Sources: []OffsetEntry{{JSON: EncodeKafkaOffsets(map[string]map[int32]int64{"clicks": {0: n * 10, 1: n * 20}}), Present: true}}}
	b.put(OffsetsKey(n), must(seq.Encode()))
	v := n + 1
	ids := map[int64][][]string{}
	if b.ckgate {
		b.ckgateBatch(v, ids)
	}
	for op := range b.ops {
		for part := range b.parts {
			if b.ckgate {
				break
			}
			b.stateFile(op, part, v, KindDelta, []StateRecord{{Key: []byte{byte(part), byte(v)}, Value: make([]byte, 16)}, {Key: []byte{9}, Delete: true}})
			if b.snapshotEvery > 0 && v%b.snapshotEvery == 0 {
				b.stateFile(op, part, v, KindSnapshot, []StateRecord{{Key: []byte{1}, Value: make([]byte, 8)}})
			}
			ids[int64(op)] = append(ids[int64(op)], []string{uid(op, part, v)})
		}
	}
	if commit {
		c := CommitMetadata{NextBatchWatermarkMs: n*1000 + 500, Epoch: b.epoch}
		if b.uids || b.ckgate {
			c.StateUniqueIDs = ids
		}
		b.put(CommitKey(n), must(c.Encode()))
	}
	return b
}

func (b *builder) stateKey(op, part int, v int64, kind string) string {
	n := StateFileName{Version: v, Kind: kind}
	if b.uids {
		n.UniqueID = uid(op, part, v)
	}
	return StoreDirKey(fmt.Sprint(op), part, DefaultStore) + "/" + n.String()
}

func (b *builder) stateFile(op, part int, v int64, kind string, recs []StateRecord) {
	b.t.Helper()
	data := EncodeDelta(recs)
	if kind == KindSnapshot {
		data = must(EncodeSnapshot(recs))
	}
	b.put(b.stateKey(op, part, v, kind), data)
}

// ckgateWrite writes version v of every partition a batch changes, and
// records the tips in ids.
func (b *builder) ckgateBatch(v int64, ids map[int64][][]string) {
	if b.tips == nil {
		b.tips = map[[2]int]string{}
	}
	for op := range b.ops {
		ids[int64(op)] = make([][]string, b.parts)
		for part := range b.parts {
			k := [2]int{op, part}
			if b.skip == nil || !b.skip(v-1, op, part) {
				snap := b.snapshotEvery > 0 && v%b.snapshotEvery == 0 || b.tips[k] == ""
				h := CkgateStateHeader{Snapshot: snap, Version: v}
				recs := []StateRecord{{Key: []byte{1, byte(part)}, Value: []byte{byte(v)}}}
				name := StateFileName{Version: v, UniqueID: fmt.Sprintf("%06x%02x%02x", v, op, part), Kind: KindDelta}
				if snap {
					name.Kind = KindSnapshot
				} else {
					h.Base = b.tips[k]
					recs = append(recs, StateRecord{Key: []byte{2}, Delete: true})
				}
				b.put(StoreDirKey(fmt.Sprint(op), part, DefaultStore)+"/"+name.String(), encodeCkgateState(h, recs))
				b.tips[k] = name.String()
			}
			ids[int64(op)][part] = []string{}
			if t := b.tips[k]; t != "" {
				ids[int64(op)][part] = []string{t}
			}
		}
	}
}

// batches writes batches 0..n-1, all committed.
func (b *builder) batches(n int64) *builder {
	for i := range n {
		b.batch(i, true)
	}
	return b
}

func (b *builder) writer(epoch uint64, heartbeat time.Time) *builder {
	b.epoch = epoch
	rec := gateway.WriterRecord{Epoch: epoch, QueryID: "3f0c1c52-0000-4000-8000-000000000001", Owner: "host-a:4242", Host: "host-a", PID: 4242,
		Since: heartbeat.Add(-time.Hour), Heartbeat: heartbeat, LeaseMs: 30000, WriteID: "w1"}
	put(b.t, b.st, gateway.WriterKey, rec.Encode())
	return b
}

func (b *builder) get(key string) []byte {
	b.t.Helper()
	data, _, err := b.st.Get(t0ctx, key)
	if err != nil {
		b.t.Fatal(err)
	}
	return data
}

// rocksZip returns a RocksDB checkpoint zip whose metadata names ssts.
func rocksZip(t testing.TB, ssts map[string]int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	meta := `v1` + "\n" + `{"sstFiles":[`
	i := 0
	for name, size := range ssts {
		if i > 0 {
			meta += ","
		}
		meta += fmt.Sprintf(`{"localFileName":"%06d.sst","dfsSstFileName":%q,"sizeBytes":%d}`, i, name, size)
		i++
	}
	meta += `],"numKeys":7}`
	for name, body := range map[string]string{"CURRENT": "MANIFEST-000005\n", "metadata": meta} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// changelogV1 returns an lz4 changelog v1 with n puts.
func changelogV1(n int) []byte {
	var raw []byte
	for i := range n {
		raw = appendKV(raw, []byte{0, byte(i)}, []byte{0, 1}, false)
	}
	raw = binary.BigEndian.AppendUint32(raw, 0xFFFFFFFF)
	return EncodeLZ4Block(raw)
}

// encodeCkgateState writes a ckgate state file (for tests and fixtures;
// engine/state is the writer).
func encodeCkgateState(h CkgateStateHeader, recs []StateRecord) []byte {
	b := []byte(ckgateStateMagic)
	b = append(b, 1, 'd')
	if h.Snapshot {
		b[5] = 's'
	}
	for _, v := range []int64{h.Version, h.Depth, h.ChainBytes, h.SnapBytes} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	b = binary.AppendUvarint(b, uint64(len(h.Base)))
	b = append(b, h.Base...)
	for _, r := range recs {
		if r.Delete {
			b = append(b, 2)
			b = binary.AppendUvarint(b, uint64(len(r.Key)))
			b = append(b, r.Key...)
			continue
		}
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(r.Key)))
		b = append(b, r.Key...)
		b = binary.AppendUvarint(b, uint64(len(r.Value)))
		b = append(b, r.Value...)
	}
	b = append(b, 0)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

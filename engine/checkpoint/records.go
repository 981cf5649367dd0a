package checkpoint

import (
	"encoding/binary"
	"fmt"
)

// RecordCounts counts the records of one state file without decoding the
// rows (UnsafeRow, Avro) they carry.
type RecordCounts struct {
	Puts    int64 `json:"puts"`
	Deletes int64 `json:"deletes"`
	Merges  int64 `json:"merges,omitempty"`
}

// countKVRecords walks the length-prefixed record stream of an HDFS delta
// or snapshot, or of a RocksDB changelog v1/v3:
//
//	{ int32 keyLen; key; int32 valueLen; value } | { int32 keyLen; key; int32 -1 } ... int32 -1
//
// (big-endian). allowDeletes is false for snapshots, where a negative value
// length is corrupt. The stream must end exactly at the -1 marker.
func countKVRecords(b []byte, allowDeletes bool) (RecordCounts, error) {
	var c RecordCounts
	off := 0
	for {
		if len(b)-off < 4 {
			return c, truncatedf("record stream ends at byte %d without the end marker", off)
		}
		keyLen := int32(binary.BigEndian.Uint32(b[off:]))
		off += 4
		if keyLen == -1 {
			break
		}
		valLen, next, err := recordKey(b, off, keyLen, "record", off-4)
		if err != nil {
			return c, err
		}
		off = next
		if valLen < 0 {
			if !allowDeletes {
				return c, corruptf("snapshot record at byte %d: value size cannot be %d", off-4, valLen)
			}
			c.Deletes++
			continue
		}
		if off, err = recordValue(b, off, valLen, "record"); err != nil {
			return c, err
		}
		c.Puts++
	}
	if off != len(b) {
		return c, corruptf("%d bytes after the end marker", len(b)-off)
	}
	return c, nil
}

// recordKey checks the key of keyLen bytes at b[off:] of the record
// (kind: "record", "changelog record") that starts at byte at, and reads
// the value size after the key. next is the offset of the value.
func recordKey(b []byte, off int, keyLen int32, kind string, at int) (valLen int32, next int, err error) {
	if keyLen < 0 {
		return 0, off, corruptf("%s at byte %d: key size cannot be %d", kind, at, keyLen)
	}
	if int64(len(b)-off) < int64(keyLen)+4 {
		return 0, off, truncatedf("%s at byte %d: key of %d bytes cut", kind, at, keyLen)
	}
	off += int(keyLen)
	return int32(binary.BigEndian.Uint32(b[off:])), off + 4, nil
}

// recordValue checks the value of valLen (>= 0) bytes at b[off:], right
// after its size, and returns the offset after it.
func recordValue(b []byte, off int, valLen int32, kind string) (int, error) {
	if int64(len(b)-off) < int64(valLen) {
		return off, truncatedf("%s at byte %d: value of %d bytes cut", kind, off-4, valLen)
	}
	return off + int(valLen), nil
}

// Record types of changelog v2/v4 (StateStoreChangelogWriterV2).
const (
	recordEOF    = 0x00
	recordPut    = 0x01
	recordDelete = 0x10
	recordMerge  = 0x11
)

// countTypedRecords walks a changelog v2/v4 record stream:
//
//	{ byte type; int32 keyLen; key; int32 valueLen; value } ... byte 0x00
//
// with valueLen -1 for deletes.
func countTypedRecords(b []byte) (RecordCounts, error) {
	var c RecordCounts
	off := 0
	for {
		if off >= len(b) {
			return c, truncatedf("changelog ends at byte %d without the end marker", off)
		}
		t := b[off]
		off++
		if t == recordEOF {
			break
		}
		if t != recordPut && t != recordDelete && t != recordMerge {
			return c, corruptf("changelog record at byte %d: unknown type 0x%02x", off-1, t)
		}
		if len(b)-off < 4 {
			return c, truncatedf("changelog record at byte %d cut", off-1)
		}
		keyLen := int32(binary.BigEndian.Uint32(b[off:]))
		valLen, next, err := recordKey(b, off+4, keyLen, "changelog record", off-1)
		if err != nil {
			return c, err
		}
		off = next
		if t == recordDelete {
			if valLen != -1 {
				return c, corruptf("changelog delete at byte %d has a value size %d", off-4, valLen)
			}
			c.Deletes++
			continue
		}
		if valLen < 0 {
			return c, corruptf("changelog record at byte %d: value size cannot be %d", off-4, valLen)
		}
		if off, err = recordValue(b, off, valLen, "changelog record"); err != nil {
			return c, err
		}
		if t == recordMerge {
			c.Merges++
		} else {
			c.Puts++
		}
	}
	if off != len(b) {
		return c, corruptf("%d bytes after the changelog end marker", len(b)-off)
	}
	return c, nil
}

// appendKV appends one put (value != nil) or delete record.
func appendKV(b, key, value []byte, del bool) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
	b = append(b, key...)
	if del {
		return binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(value)))
	return append(b, value...)
}

// StateRecord is one record of a state file written by EncodeDelta or
// EncodeSnapshot: a put of Key→Value, or a delete of Key.
type StateRecord struct {
	Key, Value []byte
	Delete     bool
}

// EncodeDelta returns an HDFS-provider delta file (lz4 codec) holding recs.
func EncodeDelta(recs []StateRecord) []byte {
	var b []byte
	for _, r := range recs {
		b = appendKV(b, r.Key, r.Value, r.Delete)
	}
	b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
	return EncodeLZ4Block(b)
}

// EncodeSnapshot returns an HDFS-provider snapshot file (lz4 codec). A
// snapshot holds puts only.
func EncodeSnapshot(recs []StateRecord) ([]byte, error) {
	for i, r := range recs {
		if r.Delete {
			return nil, fmt.Errorf("snapshot record %d is a delete", i)
		}
	}
	return EncodeDelta(recs), nil
}

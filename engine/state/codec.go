package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/ckgate/ckgate/engine/checkpoint/errkind"
)

// ErrCorrupt is returned for bytes that are not a state file. It is the
// one value checkpoint.ErrCorrupt and engine.ErrCorrupt are too.
var ErrCorrupt = errkind.Corrupt

const (
	magic        = "CKGS"
	formatV1     = 1
	kindDelta    = 'd'
	kindSnapshot = 's'
	opEnd        = 0
	opPut        = 1
	opDelete     = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is the part of a state file before its records.
type Header struct {
	Snapshot   bool
	Version    int64
	Depth      int64
	ChainBytes int64
	SnapBytes  int64
	Base       string
}

// Change is one record: a put of Key→Value, or a delete of Key.
type Change struct {
	Key, Value []byte
	Delete     bool
}

// EncodedSize is the size of c's record in a state file.
func (c Change) EncodedSize() int64 {
	n := 1 + uvarintLen(uint64(len(c.Key))) + len(c.Key)
	if !c.Delete {
		n += uvarintLen(uint64(len(c.Value))) + len(c.Value)
	}
	return int64(n)
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// Encoder builds one state file.
type Encoder struct {
	b       []byte
	last    []byte
	hasLast bool
	snap    bool
	err     error
}

// NewEncoder starts a file with h.
func NewEncoder(h Header, sizeHint int) *Encoder {
	b := make([]byte, 0, 64+len(h.Base)+sizeHint)
	b = append(b, magic...)
	b = append(b, formatV1)
	if h.Snapshot {
		b = append(b, kindSnapshot)
	} else {
		b = append(b, kindDelta)
	}
	for _, v := range []int64{h.Version, h.Depth, h.ChainBytes, h.SnapBytes} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	b = binary.AppendUvarint(b, uint64(len(h.Base)))
	b = append(b, h.Base...)
	return &Encoder{b: b, snap: h.Snapshot}
}

// Add appends c; keys must come in strictly ascending order.
func (e *Encoder) Add(c Change) {
	if e.err != nil {
		return
	}
	if e.hasLast && bytes.Compare(c.Key, e.last) <= 0 {
		e.err = fmt.Errorf("state encoder: key %x after %x: keys must ascend", c.Key, e.last)
		return
	}
	if c.Delete && e.snap {
		e.err = errors.New("state encoder: a snapshot holds no deletes")
		return
	}
	e.last, e.hasLast = append(e.last[:0], c.Key...), true
	if c.Delete {
		e.b = append(e.b, opDelete)
		e.b = binary.AppendUvarint(e.b, uint64(len(c.Key)))
		e.b = append(e.b, c.Key...)
		return
	}
	e.b = append(e.b, opPut)
	e.b = binary.AppendUvarint(e.b, uint64(len(c.Key)))
	e.b = append(e.b, c.Key...)
	e.b = binary.AppendUvarint(e.b, uint64(len(c.Value)))
	e.b = append(e.b, c.Value...)
}

// Finish ends the file and returns its bytes.
func (e *Encoder) Finish() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	e.b = append(e.b, opEnd)
	e.b = binary.BigEndian.AppendUint32(e.b, crc32.Checksum(e.b, castagnoli))
	return e.b, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w state file: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Decode checks data and returns its header; each calls fn for every
// record in order (the slices alias data). A nil fn only checks.
func Decode(data []byte, fn func(Change) error) (Header, error) {
	var h Header
	if len(data) < len(magic)+2+5+4 {
		return h, corrupt("%d bytes is too short", len(data))
	}
	if string(data[:4]) != magic {
		return h, corrupt("bad magic %q", data[:4])
	}
	body, sum := data[:len(data)-4], binary.BigEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return h, corrupt("checksum %08x, want %08x", got, sum)
	}
	if body[4] != formatV1 {
		return h, corrupt("format %d (want 1)", body[4])
	}
	switch body[5] {
	case kindDelta:
	case kindSnapshot:
		h.Snapshot = true
	default:
		return h, corrupt("kind %q", body[5])
	}
	off := 6
	var nums [4]int64
	for i := range nums {
		v, w := binary.Uvarint(body[off:])
		if w <= 0 || v > 1<<62 {
			return h, corrupt("header field %d at byte %d", i, off)
		}
		nums[i] = int64(v)
		off += w
	}
	h.Version, h.Depth, h.ChainBytes, h.SnapBytes = nums[0], nums[1], nums[2], nums[3]
	n, w := binary.Uvarint(body[off:])
	if w <= 0 || n > uint64(len(body)-off-w) || n > 1024 {
		return h, corrupt("base name at byte %d", off)
	}
	off += w
	h.Base = string(body[off : off+int(n)])
	off += int(n)
	if h.Snapshot && (h.Depth != 0 || h.Base != "") {
		return h, corrupt("snapshot with depth %d and base %q", h.Depth, h.Base)
	}
	var last []byte
	for i := 0; ; i++ {
		if off >= len(body) {
			return h, corrupt("records end at byte %d without the end marker", off)
		}
		op := body[off]
		off++
		if op == opEnd {
			break
		}
		if op != opPut && op != opDelete {
			return h, corrupt("record %d: op %d", i, op)
		}
		if op == opDelete && h.Snapshot {
			return h, corrupt("record %d: a delete in a snapshot", i)
		}
		k, rest, err := field(body[off:])
		if err != nil {
			return h, corrupt("record %d key: %v", i, err)
		}
		off = len(body) - len(rest)
		if i > 0 && bytes.Compare(k, last) <= 0 {
			return h, corrupt("record %d: keys out of order", i)
		}
		last = k
		c := Change{Key: k, Delete: op == opDelete}
		if op == opPut {
			v, rest, err := field(body[off:])
			if err != nil {
				return h, corrupt("record %d value: %v", i, err)
			}
			off = len(body) - len(rest)
			c.Value = v
		}
		if fn != nil {
			if err := fn(c); err != nil {
				return h, err
			}
		}
	}
	if off != len(body) {
		return h, corrupt("%d bytes after the end marker", len(body)-off)
	}
	return h, nil
}

func field(b []byte) ([]byte, []byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return nil, nil, errors.New("length cut or too long")
	}
	return b[w : w+int(n) : w+int(n)], b[w+int(n):], nil
}

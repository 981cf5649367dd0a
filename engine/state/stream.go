package state

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"hash"
	"hash/crc32"
	"io"
	"slices"
)

// MaxField bounds one key or value of a record read by Check: far above
// what the engine's operators store, and small enough that a damaged
// length never becomes a large allocation.
const MaxField = 16 << 20

// Check verifies a state file as it streams from r (the same checks as
// Decode with a nil fn: header, record framing and order, end marker and
// checksum) and returns its header and size. It holds one record at a
// time, so a file of any size costs at most about 2 × MaxField of memory,
// and damage is found at the byte where it starts, not after reading the
// whole file.
// A read error of r (not the end of the file) is returned as it is: it is
// not damage.
func Check(r io.Reader) (Header, int64, error) {
	er := &errReader{r: r}
	sr := &sumReader{r: bufio.NewReaderSize(er, 64<<10), h: crc32.New(castagnoli)}
	h, n, err := sr.check()
	if er.err != nil {
		return h, n, er.err
	}
	return h, n, err
}

// errReader keeps the first error of r other than io.EOF.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

func (sr *sumReader) check() (Header, int64, error) {
	h, err := sr.header()
	if err != nil {
		return h, sr.n, err
	}
	var last, cur []byte
	for i := 0; ; i++ {
		op, err := sr.byte()
		if err != nil {
			return h, sr.n, corrupt("records end at byte %d without the end marker", sr.n)
		}
		if op == opEnd {
			break
		}
		if op != opPut && op != opDelete {
			return h, sr.n, corrupt("record %d: op %d", i, op)
		}
		if op == opDelete && h.Snapshot {
			return h, sr.n, corrupt("record %d: a delete in a snapshot", i)
		}
		if cur, err = sr.field(cur[:0]); err != nil {
			return h, sr.n, corrupt("record %d key: %v", i, err)
		}
		if i > 0 && bytes.Compare(cur, last) <= 0 {
			return h, sr.n, corrupt("record %d: keys out of order", i)
		}
		last, cur = cur, last
		if op == opPut {
			if err := sr.skipField(); err != nil {
				return h, sr.n, corrupt("record %d value: %v", i, err)
			}
		}
	}
	got := sr.h.Sum32()
	var tail [5]byte
	n, _ := io.ReadFull(sr.r, tail[:])
	sr.n += int64(n)
	switch {
	case n < 4:
		return h, sr.n, corrupt("%d bytes is too short", sr.n)
	case n > 4:
		// bytes after the checksum: the body did not end at the marker
		return h, sr.n, corrupt("bytes after the end marker")
	}
	if want := binary.BigEndian.Uint32(tail[:4]); got != want {
		return h, sr.n, corrupt("checksum %08x, want %08x", got, want)
	}
	return h, sr.n, nil
}

// sumReader reads a state file's body, hashing every byte it returns.
type sumReader struct {
	r *bufio.Reader
	h hash.Hash32
	n int64
}

func (s *sumReader) byte() (byte, error) {
	b, err := s.r.ReadByte()
	if err == nil {
		s.h.Write([]byte{b})
		s.n++
	}
	return b, err
}

func (s *sumReader) ReadByte() (byte, error) { return s.byte() }

func (s *sumReader) full(p []byte) error {
	n, err := io.ReadFull(s.r, p)
	s.h.Write(p[:n])
	s.n += int64(n)
	return err
}

func (s *sumReader) uvarint() (uint64, error) { return binary.ReadUvarint(s) }

// field reads a length-prefixed field into buf.
func (s *sumReader) field(buf []byte) ([]byte, error) {
	n, err := s.uvarint()
	if err != nil {
		return nil, errors.New("length cut or too long")
	}
	if n > MaxField {
		return nil, errors.New("length cut or too long")
	}
	buf = slices.Grow(buf[:0], int(n))[:n]
	if err := s.full(buf); err != nil {
		return nil, errors.New("length cut or too long")
	}
	return buf, nil
}

// skipField hashes a length-prefixed field without keeping it.
func (s *sumReader) skipField() error {
	n, err := s.uvarint()
	if err != nil || n > MaxField {
		return errors.New("length cut or too long")
	}
	if _, err := io.CopyN(s.h, s.r, int64(n)); err != nil {
		return errors.New("length cut or too long")
	}
	s.n += int64(n)
	return nil
}

// header reads and checks the header, as Decode does.
func (s *sumReader) header() (Header, error) {
	var h Header
	var head [6]byte
	if err := s.full(head[:]); err != nil {
		return h, corrupt("%d bytes is too short", s.n)
	}
	if string(head[:4]) != magic {
		return h, corrupt("bad magic %q", head[:4])
	}
	if head[4] != formatV1 {
		return h, corrupt("format %d (want 1)", head[4])
	}
	switch head[5] {
	case kindDelta:
	case kindSnapshot:
		h.Snapshot = true
	default:
		return h, corrupt("kind %q", head[5])
	}
	var nums [4]int64
	for i := range nums {
		off := s.n
		v, err := s.uvarint()
		if err != nil || v > 1<<62 {
			return h, corrupt("header field %d at byte %d", i, off)
		}
		nums[i] = int64(v)
	}
	h.Version, h.Depth, h.ChainBytes, h.SnapBytes = nums[0], nums[1], nums[2], nums[3]
	off := s.n
	n, err := s.uvarint()
	if err != nil || n > 1024 {
		return h, corrupt("base name at byte %d", off)
	}
	base := make([]byte, n)
	if err := s.full(base); err != nil {
		return h, corrupt("base name at byte %d", off)
	}
	h.Base = string(base)
	if h.Snapshot && (h.Depth != 0 || h.Base != "") {
		return h, corrupt("snapshot with depth %d and base %q", h.Depth, h.Base)
	}
	return h, nil
}

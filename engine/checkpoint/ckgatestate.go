package checkpoint

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
)

// ckgate's engine state files (engine/state, format 1):
// state/<op>/<part>/<version>_<write id>.delta|snapshot holding
//
//	"CKGS" | format 1 | kind 'd'|'s' | uvarint version, depth, chainBytes, snapBytes
//	| uvarint len + base file name | records { 1 put: uvarint klen, key, uvarint vlen, value
//	| 2 delete: uvarint klen, key }* | 0 | CRC-32C (big-endian) of everything before it
//
// Each file names the file it builds on (its base); commits/N names every
// partition's newest file (its tip) in stateUniqueIds. This package reads
// the header and counts records, so Inspect can follow and check chains;
// engine/state owns the format.

const ckgateStateMagic = "CKGS"

// CkgateStateHeader is the header of a ckgate state file.
type CkgateStateHeader struct {
	Snapshot   bool
	Version    int64
	Depth      int64
	ChainBytes int64
	SnapBytes  int64
	Base       string // the file this one builds on ("" = the empty state)
}

// IsCkgateState reports whether data starts like a ckgate state file.
func IsCkgateState(data []byte) bool { return bytes.HasPrefix(data, []byte(ckgateStateMagic)) }

// DecodeCkgateState checks a ckgate state file (magic, CRC-32C, layout) and
// returns its header and record counts.
func DecodeCkgateState(data []byte) (CkgateStateHeader, RecordCounts, error) {
	var h CkgateStateHeader
	var c RecordCounts
	if len(data) < len(ckgateStateMagic)+2+5+4 {
		return h, c, truncatedf("ckgate state file of %d bytes", len(data))
	}
	if !IsCkgateState(data) {
		return h, c, corruptf("not a ckgate state file (magic %q)", data[:4])
	}
	body, sum := data[:len(data)-4], binary.BigEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return h, c, corruptf("ckgate state file: CRC-32C %08x, recorded %08x", got, sum)
	}
	h, off, err := parseCkgateHeader(body)
	if err != nil {
		return h, c, err
	}
	field := func() bool {
		l, w := binary.Uvarint(body[off:])
		if w <= 0 || l > uint64(len(body)-off-w) {
			return false
		}
		off += w + int(l)
		return true
	}
	for {
		if off >= len(body) {
			return h, c, truncatedf("ckgate state file: records end at byte %d without the end marker", off)
		}
		op := body[off]
		off++
		switch op {
		case 0:
			if off != len(body) {
				return h, c, corruptf("ckgate state file: %d bytes after the end marker", len(body)-off)
			}
			return h, c, nil
		case 1:
			if !field() || !field() {
				return h, c, corruptf("ckgate state file: put record cut at byte %d", off)
			}
			c.Puts++
		case 2:
			if h.Snapshot || !field() {
				return h, c, corruptf("ckgate state file: bad delete record at byte %d", off)
			}
			c.Deletes++
		default:
			return h, c, corruptf("ckgate state file: op %d at byte %d", op, off-1)
		}
	}
}

// CkgateStateHeaderMax bounds the header of a ckgate state file: a prefix
// of this many bytes always holds it.
const CkgateStateHeaderMax = 6 + 5*10 + 1024

// DecodeCkgateStateHeader decodes the header of a ckgate state file from a
// prefix of it (at least CkgateStateHeaderMax bytes, or the whole file),
// without the records or the checksum: what a reader that only follows
// chains (retention) needs, without reading a file of any size whole.
func DecodeCkgateStateHeader(prefix []byte) (CkgateStateHeader, error) {
	if len(prefix) < len(ckgateStateMagic)+2 {
		return CkgateStateHeader{}, truncatedf("ckgate state file of %d bytes", len(prefix))
	}
	if !IsCkgateState(prefix) {
		return CkgateStateHeader{}, corruptf("not a ckgate state file (magic %q)", prefix[:4])
	}
	h, _, err := parseCkgateHeader(prefix)
	return h, err
}

// parseCkgateHeader parses the header at the start of b (magic already
// checked) and returns the offset of the records.
func parseCkgateHeader(b []byte) (CkgateStateHeader, int, error) {
	var h CkgateStateHeader
	body := b
	if body[4] != 1 {
		return h, 0, &VersionError{What: "ckgate state file", Found: int(body[4]), Max: 1}
	}
	switch body[5] {
	case 'd':
	case 's':
		h.Snapshot = true
	default:
		return h, 0, corruptf("ckgate state file: kind %q", body[5])
	}
	off := 6
	var nums [4]int64
	for i := range nums {
		v, w := binary.Uvarint(body[off:])
		if w <= 0 || v > 1<<62 {
			return h, 0, corruptf("ckgate state file: header field %d at byte %d", i, off)
		}
		nums[i], off = int64(v), off+w
	}
	h.Version, h.Depth, h.ChainBytes, h.SnapBytes = nums[0], nums[1], nums[2], nums[3]
	n, w := binary.Uvarint(body[off:])
	if w <= 0 || n > uint64(len(body)-off-w) || n > 1024 {
		return h, 0, corruptf("ckgate state file: base name at byte %d", off)
	}
	off += w
	h.Base = string(body[off : off+int(n)])
	off += int(n)
	if h.Snapshot && h.Base != "" {
		return h, 0, corruptf("ckgate state snapshot with a base %q", h.Base)
	}
	return h, off, nil
}

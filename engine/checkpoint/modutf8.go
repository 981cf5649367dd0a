package checkpoint

import (
	"encoding/binary"
	"strings"
	"unicode/utf16"
)

// Java's DataOutputStream.writeUTF: a big-endian uint16 byte length, then
// "modified UTF-8" (NUL as C0 80, supplementary characters as two 3-byte
// surrogates).

// readUTF reads one writeUTF string at off. It returns the string, the
// offset after it, and ErrTruncated / ErrCorrupt errors.
func readUTF(b []byte, off int) (string, int, error) {
	if len(b)-off < 2 {
		return "", off, truncatedf("string length at byte %d cut", off)
	}
	n := int(binary.BigEndian.Uint16(b[off:]))
	off += 2
	if len(b)-off < n {
		return "", off, truncatedf("string at byte %d: %d of %d bytes present", off-2, len(b)-off, n)
	}
	s, err := decodeModifiedUTF8(b[off : off+n])
	if err != nil {
		return "", off, corruptf("string at byte %d: %v", off-2, err)
	}
	return s, off + n, nil
}

type utfError string

func (e utfError) Error() string { return string(e) }

func decodeModifiedUTF8(b []byte) (string, error) {
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b), nil
	}
	units := make([]uint16, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			units = append(units, uint16(c))
			i++
		case c&0xE0 == 0xC0:
			if i+1 >= len(b) || b[i+1]&0xC0 != 0x80 {
				return "", utfError("malformed modified UTF-8")
			}
			units = append(units, uint16(c&0x1F)<<6|uint16(b[i+1]&0x3F))
			i += 2
		case c&0xF0 == 0xE0:
			if i+2 >= len(b) || b[i+1]&0xC0 != 0x80 || b[i+2]&0xC0 != 0x80 {
				return "", utfError("malformed modified UTF-8")
			}
			units = append(units, uint16(c&0x0F)<<12|uint16(b[i+1]&0x3F)<<6|uint16(b[i+2]&0x3F))
			i += 3
		default:
			return "", utfError("malformed modified UTF-8")
		}
	}
	return string(utf16.Decode(units)), nil
}

// appendUTF appends s as writeUTF does. It fails for strings longer than
// 65535 encoded bytes.
func appendUTF(b []byte, s string) ([]byte, error) {
	var enc []byte
	for _, u := range utf16.Encode([]rune(s)) {
		switch {
		case u != 0 && u < 0x80:
			enc = append(enc, byte(u))
		case u < 0x800:
			enc = append(enc, 0xC0|byte(u>>6), 0x80|byte(u&0x3F))
		default:
			enc = append(enc, 0xE0|byte(u>>12), 0x80|byte((u>>6)&0x3F), 0x80|byte(u&0x3F))
		}
	}
	if len(enc) > 0xFFFF {
		return b, corruptf("string of %d encoded bytes is longer than writeUTF allows", len(enc))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(enc)))
	return append(b, enc...), nil
}

// utfLen is the modified UTF-8 length of r.
func utfLen(r rune) int {
	switch {
	case r == 0:
		return 2
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < 0x10000:
		return 3
	}
	return 6 // a surrogate pair
}

// chunkString splits s into pieces of at most max encoded bytes each, as
// Spark's schema writer (v2, v3) chunks strings for writeUTF.
func chunkString(s string, max int) []string {
	if s == "" {
		return []string{""}
	}
	var out []string
	var cur strings.Builder
	n := 0
	for _, r := range s {
		w := utfLen(r)
		if n+w > max && n > 0 {
			out = append(out, cur.String())
			cur.Reset()
			n = 0
		}
		cur.WriteRune(r)
		n += w
	}
	return append(out, cur.String())
}

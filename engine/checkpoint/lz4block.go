package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pierrec/lz4/v4"
)

// lz4-java's block stream (LZ4BlockOutputStream), which Spark's default
// state store codec writes. It is not the LZ4 frame format:
//
//	"LZ4Block" | token | compressedLen int32 LE | decompressedLen int32 LE | checksum int32 LE | data
//
// token = method (0x10 raw, 0x20 lz4) | level (low nibble, block size
// 1<<(10+level)); checksum = XXH32(decompressed block, seed 0x9747b28c) &
// 0x0FFFFFFF. A stream ends with an empty raw block (lengths and checksum
// zero). Spark reads in concatenation mode: several streams may follow each
// other.
const (
	lz4Magic       = "LZ4Block"
	lz4HeaderLen   = len(lz4Magic) + 1 + 4 + 4 + 4
	lz4MethodRaw   = 0x10
	lz4MethodLZ4   = 0x20
	lz4Seed        = 0x9747b28c
	lz4LevelBase   = 10
	lz4DefaultSize = 32 << 10 // spark.io.compression.lz4.blockSize
)

// ErrTooLarge: the decoded content would exceed the caller's limit; the
// content was not decoded (it is not known to be corrupt).
var ErrTooLarge = errors.New("larger than the decode limit")

// IsLZ4Block reports whether data starts like an lz4-java block stream.
func IsLZ4Block(data []byte) bool { return bytes.HasPrefix(data, []byte(lz4Magic)) }

// DecodeLZ4Block decodes an lz4-java block stream (concatenation mode) and
// verifies every block's XXH32 checksum. limit caps the decoded size
// (<= 0: no cap); beyond it the error is ErrTooLarge. A stream that does
// not end with the end-of-stream block is ErrTruncated.
func DecodeLZ4Block(src []byte, limit int64) ([]byte, error) {
	if len(src) == 0 {
		return nil, truncatedf("empty lz4 block stream")
	}
	var out []byte
	ended := false
	off := 0
	for off < len(src) {
		rest := src[off:]
		if len(rest) < lz4HeaderLen {
			if bytes.HasPrefix([]byte(lz4Magic), rest[:min(len(rest), len(lz4Magic))]) {
				return nil, truncatedf("lz4 block header cut at byte %d", off)
			}
			return nil, corruptf("lz4 block stream: bad magic at byte %d", off)
		}
		if string(rest[:len(lz4Magic)]) != lz4Magic {
			return nil, corruptf("lz4 block stream: bad magic at byte %d", off)
		}
		token := rest[8]
		method := token & 0xF0
		level := lz4LevelBase + int(token&0x0F)
		compLen := int64(int32(binary.LittleEndian.Uint32(rest[9:])))
		origLen := int64(int32(binary.LittleEndian.Uint32(rest[13:])))
		check := binary.LittleEndian.Uint32(rest[17:])
		switch {
		case method != lz4MethodRaw && method != lz4MethodLZ4:
			return nil, corruptf("lz4 block at byte %d: unknown method 0x%02x", off, method)
		case origLen < 0 || compLen < 0 || origLen > 1<<level:
			return nil, corruptf("lz4 block at byte %d: bad lengths %d/%d", off, compLen, origLen)
		case (origLen == 0) != (compLen == 0):
			return nil, corruptf("lz4 block at byte %d: bad lengths %d/%d", off, compLen, origLen)
		case method == lz4MethodRaw && origLen != compLen:
			return nil, corruptf("lz4 raw block at byte %d: lengths differ %d/%d", off, compLen, origLen)
		}
		off += lz4HeaderLen
		if origLen == 0 {
			if check != 0 {
				return nil, corruptf("lz4 end block at byte %d: non-zero checksum", off-lz4HeaderLen)
			}
			ended = true
			continue
		}
		ended = false
		if int64(len(src)-off) < compLen {
			return nil, truncatedf("lz4 block at byte %d: %d of %d compressed bytes present", off-lz4HeaderLen, len(src)-off, compLen)
		}
		if limit > 0 && int64(len(out))+origLen > limit {
			return nil, fmt.Errorf("lz4 block stream: %w (%d bytes)", ErrTooLarge, limit)
		}
		data := src[off : off+int(compLen)]
		start := len(out)
		out = append(out, make([]byte, origLen)...)
		block := out[start:]
		if method == lz4MethodRaw {
			copy(block, data)
		} else {
			n, err := lz4.UncompressBlock(data, block)
			if err != nil || int64(n) != origLen {
				return nil, corruptf("lz4 block at byte %d does not decompress to %d bytes", off-lz4HeaderLen, origLen)
			}
		}
		if got := xxh32(block, lz4Seed) & 0x0FFFFFFF; got != check {
			return nil, corruptf("lz4 block at byte %d: checksum %08x, computed %08x", off-lz4HeaderLen, check, got)
		}
		off += int(compLen)
	}
	if !ended {
		return nil, truncatedf("lz4 block stream has no end-of-stream block")
	}
	return out, nil
}

// EncodeLZ4Block encodes data as one lz4-java block stream with Spark's
// defaults (32 KiB blocks), ending with the end-of-stream block.
func EncodeLZ4Block(data []byte) []byte {
	const level = 5 // 1<<(10+5) = 32 KiB
	var out bytes.Buffer
	buf := make([]byte, lz4.CompressBlockBound(lz4DefaultSize))
	header := func(method byte, compLen, origLen int, check uint32) {
		var h [lz4HeaderLen]byte
		copy(h[:], lz4Magic)
		h[8] = method | level
		binary.LittleEndian.PutUint32(h[9:], uint32(compLen))
		binary.LittleEndian.PutUint32(h[13:], uint32(origLen))
		binary.LittleEndian.PutUint32(h[17:], check)
		out.Write(h[:])
	}
	for len(data) > 0 {
		block := data[:min(len(data), lz4DefaultSize)]
		data = data[len(block):]
		check := xxh32(block, lz4Seed) & 0x0FFFFFFF
		n, err := lz4.CompressBlock(block, buf, nil)
		if err != nil || n == 0 || n >= len(block) {
			header(lz4MethodRaw, len(block), len(block), check)
			out.Write(block)
			continue
		}
		header(lz4MethodLZ4, n, len(block), check)
		out.Write(buf[:n])
	}
	header(lz4MethodRaw, 0, 0, 0)
	return out.Bytes()
}

package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"path"
	"strings"
)

// Checksum sidecars.
//
// Hadoop's ChecksumFileSystem (local disk) writes ".<name>.crc" beside every
// file: "crc\x00", a big-endian int32 bytesPerChecksum (512), then one
// big-endian CRC32 (IEEE) per chunk of the file.
//
// Spark ≥ 4.1 writes "<name>.crc" (not hidden) beside state store files:
// JSON {"algorithm":"CRC32C","value":<int32>,"mainFileSize":<long>,…}.

const hadoopCRCMagic = "crc\x00"

// HadoopCRC is a decoded Hadoop .crc sidecar.
type HadoopCRC struct {
	BytesPerChecksum int
	Sums             []uint32
}

// HadoopCRCName returns the sidecar key of key: dir/.name.crc.
func HadoopCRCName(key string) string {
	dir, name := path.Split(key)
	return dir + "." + name + ".crc"
}

// hadoopCRCTarget returns the key a Hadoop sidecar name belongs to.
func hadoopCRCTarget(key string) (string, bool) {
	dir, name := path.Split(key)
	if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".crc") || len(name) <= len("..crc") {
		return "", false
	}
	return dir + name[1:len(name)-len(".crc")], true
}

// DecodeHadoopCRC decodes a Hadoop .crc sidecar.
func DecodeHadoopCRC(data []byte) (*HadoopCRC, error) {
	if len(data) < 8 {
		return nil, truncatedf("checksum file of %d bytes", len(data))
	}
	if string(data[:4]) != hadoopCRCMagic {
		return nil, corruptf("checksum file without the \"crc\\0\" header")
	}
	bpc := int32(binary.BigEndian.Uint32(data[4:]))
	if bpc <= 0 {
		return nil, corruptf("checksum file: %d bytes per checksum", bpc)
	}
	body := data[8:]
	if len(body)%4 != 0 {
		return nil, truncatedf("checksum file: %d trailing bytes", len(body)%4)
	}
	c := &HadoopCRC{BytesPerChecksum: int(bpc), Sums: make([]uint32, len(body)/4)}
	for i := range c.Sums {
		c.Sums[i] = binary.BigEndian.Uint32(body[i*4:])
	}
	return c, nil
}

// EncodeHadoopCRC returns the Hadoop .crc sidecar of data (512-byte chunks).
func EncodeHadoopCRC(data []byte) []byte {
	const bpc = 512
	b := append([]byte(hadoopCRCMagic), 0, 0, 2, 0)
	for off := 0; off < len(data); off += bpc {
		b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(data[off:min(off+bpc, len(data))]))
	}
	return b
}

// ChecksumMismatch describes a file that does not match its sidecar. It is
// ErrCorrupt.
type ChecksumMismatch struct {
	Reason string
}

func (e *ChecksumMismatch) Error() string        { return "checksum mismatch: " + e.Reason }
func (e *ChecksumMismatch) Is(target error) bool { return target == ErrCorrupt }

// Verify checks data against the sidecar.
func (c *HadoopCRC) Verify(data []byte) error {
	chunks := (len(data) + c.BytesPerChecksum - 1) / c.BytesPerChecksum
	if chunks != len(c.Sums) {
		return &ChecksumMismatch{Reason: fmt.Sprintf("the sidecar covers %d chunks of %d bytes, the file has %d bytes (%d chunks)",
			len(c.Sums), c.BytesPerChecksum, len(data), chunks)}
	}
	for i, want := range c.Sums {
		chunk := data[i*c.BytesPerChecksum : min((i+1)*c.BytesPerChecksum, len(data))]
		if got := crc32.ChecksumIEEE(chunk); got != want {
			return &ChecksumMismatch{Reason: fmt.Sprintf("chunk %d (bytes %d-%d): CRC32 %08x, sidecar %08x",
				i, i*c.BytesPerChecksum, i*c.BytesPerChecksum+len(chunk)-1, got, want)}
		}
	}
	return nil
}

// FileChecksum is Spark 4.1's JSON checksum sidecar of a state store file.
type FileChecksum struct {
	Algorithm    string          `json:"algorithm"`
	Value        int32           `json:"value"`
	MainFileSize int64           `json:"mainFileSize"`
	TimestampMs  int64           `json:"timestampMs,omitempty"`
	Creator      json.RawMessage `json:"creator,omitempty"`
}

// DecodeFileChecksum decodes a Spark 4.1 "<file>.crc" JSON sidecar.
func DecodeFileChecksum(data []byte) (*FileChecksum, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, truncatedf("empty file checksum")
	}
	var c FileChecksum
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, corruptf("file checksum: %v", err)
	}
	if c.Algorithm == "" {
		return nil, corruptf("file checksum without an algorithm")
	}
	return &c, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Verify checks data against the sidecar (CRC32C or CRC32).
func (c *FileChecksum) Verify(data []byte) error {
	var got uint32
	switch strings.ToUpper(c.Algorithm) {
	case "CRC32C":
		got = crc32.Checksum(data, castagnoli)
	case "CRC32":
		got = crc32.ChecksumIEEE(data)
	default:
		return fmt.Errorf("%w: checksum algorithm %q", ErrUnsupportedCodec, c.Algorithm)
	}
	if int64(len(data)) != c.MainFileSize || int32(got) != c.Value {
		return &ChecksumMismatch{Reason: fmt.Sprintf("expected (file size: %d, checksum: %d), computed (file size: %d, checksum: %d)",
			c.MainFileSize, c.Value, len(data), int32(got))}
	}
	return nil
}

// isJSONChecksumName reports whether name is a Spark 4.1 sidecar of a
// state file ("1.delta.crc", "2_<uuid>.zip.crc", …): not hidden.
func isJSONChecksumName(name string) (string, bool) {
	if strings.HasPrefix(name, ".") {
		return "", false
	}
	main, ok := strings.CutSuffix(name, ".crc")
	return main, ok && main != ""
}

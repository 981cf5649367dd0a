package checkpoint

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// RocksDBStateStoreProvider files: <v>.zip (or <v>_<uuid>.zip with
// checkpoint format v2) is a plain ZIP of the RocksDB checkpoint's small
// files plus a "metadata" entry naming the SST files (kept beside it under
// SSTs/); <v>.changelog (<v>_<uuid>.changelog) is a compressed record
// stream in one of four versions. SST files are never read.

// ChangelogMaxVersion is the highest changelog version understood.
const ChangelogMaxVersion = 4

// RocksDBFile is one SST or log file a RocksDB checkpoint refers to.
type RocksDBFile struct {
	LocalFileName  string `json:"localFileName"`
	DFSSstFileName string `json:"dfsSstFileName,omitempty"`
	DFSLogFileName string `json:"dfsLogFileName,omitempty"`
	SizeBytes      int64  `json:"sizeBytes"`
}

// DFSName is the file's name under SSTs/ or logs/.
func (f RocksDBFile) DFSName() string {
	if f.DFSSstFileName != "" {
		return f.DFSSstFileName
	}
	return f.DFSLogFileName
}

// RocksDBCheckpointMetadata is the "metadata" entry of a RocksDB zip
// (RocksDBCheckpointMetadata, version 1).
type RocksDBCheckpointMetadata struct {
	SSTFiles            []RocksDBFile     `json:"sstFiles"`
	LogFiles            []RocksDBFile     `json:"logFiles,omitempty"`
	NumKeys             int64             `json:"numKeys"`
	NumInternalKeys     *int64            `json:"numInternalKeys,omitempty"`
	ColumnFamilyMapping map[string]int64  `json:"columnFamilyMapping,omitempty"`
	ColumnFamilyTypeMap map[string]bool   `json:"columnFamilyTypeMap,omitempty"`
	MaxColumnFamilyID   *int64            `json:"maxColumnFamilyId,omitempty"`
	Extra               map[string]string `json:"-"`
}

// ZipEntry is one file inside a RocksDB zip.
type ZipEntry struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// RocksDBSnapshot is what a RocksDB zip holds.
type RocksDBSnapshot struct {
	Entries  []ZipEntry
	Metadata RocksDBCheckpointMetadata
}

// maxZipMetadata caps the "metadata" entry read from a zip.
const maxZipMetadata = 4 << 20

// DecodeRocksDBZip lists a RocksDB checkpoint zip and decodes its metadata
// entry. It does not read SST files.
func DecodeRocksDBZip(data []byte) (*RocksDBSnapshot, error) {
	if len(data) == 0 {
		return nil, truncatedf("empty zip")
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
			return nil, truncatedf("zip: %v", err)
		}
		return nil, corruptf("zip: %v", err)
	}
	snap := &RocksDBSnapshot{}
	var meta *zip.File
	for _, f := range zr.File {
		snap.Entries = append(snap.Entries, ZipEntry{Name: f.Name, Size: int64(f.UncompressedSize64)})
		if f.Name == "metadata" {
			meta = f
		}
	}
	if meta == nil {
		return nil, corruptf("zip has no metadata entry")
	}
	if meta.UncompressedSize64 > maxZipMetadata {
		return nil, corruptf("zip metadata entry of %d bytes", meta.UncompressedSize64)
	}
	rc, err := meta.Open()
	if err != nil {
		return nil, corruptf("zip metadata entry: %v", err)
	}
	b, err := io.ReadAll(io.LimitReader(rc, maxZipMetadata+1))
	rc.Close()
	if err != nil {
		return nil, corruptf("zip metadata entry: %v", err)
	}
	m, err := DecodeRocksDBCheckpointMetadata(b)
	if err != nil {
		return nil, err
	}
	snap.Metadata = *m
	return snap, nil
}

// DecodeRocksDBCheckpointMetadata decodes "v1\n{json}".
func DecodeRocksDBCheckpointMetadata(b []byte) (*RocksDBCheckpointMetadata, error) {
	lines := splitLines(b)
	if len(lines) == 0 {
		return nil, truncatedf("empty RocksDB checkpoint metadata")
	}
	if _, err := parseVersionLine(lines[0], 1, "RocksDB checkpoint metadata"); err != nil {
		return nil, err
	}
	if len(lines) < 2 {
		return nil, truncatedf("RocksDB checkpoint metadata without JSON")
	}
	var m RocksDBCheckpointMetadata
	if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
		return nil, corruptf("RocksDB checkpoint metadata: %v", err)
	}
	return &m, nil
}

// LineageEntry is one element of a checkpoint-v2 changelog's lineage: an
// earlier version of the store and its unique id.
type LineageEntry struct {
	Version            int64  `json:"version"`
	CheckpointUniqueID string `json:"checkpointUniqueId"`
}

// Changelog is a decoded RocksDB changelog file.
type Changelog struct {
	Version int
	Lineage []LineageEntry // v3 and v4
	Counts  RecordCounts
}

// DecodeChangelog decompresses a RocksDB changelog (codec as in the offset
// log conf, "" = lz4) and counts its records. The version is read as
// Spark's StateStoreChangelogReaderFactory does: a leading writeUTF string
// "v<N>"; anything else (v1 files start with a record) is v1.
func DecodeChangelog(codec string, data []byte, limit int64) (*Changelog, error) {
	raw, err := decompressState(codec, data, limit)
	if err != nil {
		return nil, err
	}
	return decodeChangelogStream(raw)
}

func decodeChangelogStream(raw []byte) (*Changelog, error) {
	version, off := changelogVersion(raw)
	cl := &Changelog{Version: version}
	switch version {
	case 1, 2:
	case 3, 4:
		s, next, err := readUTF(raw, off)
		if err != nil {
			return nil, err
		}
		off = next
		if err := json.Unmarshal([]byte(s), &cl.Lineage); err != nil {
			return nil, corruptf("changelog v%d lineage: %v", version, err)
		}
	default:
		return nil, &VersionError{What: "state changelog", Found: version, Max: ChangelogMaxVersion}
	}
	var err error
	if version == 1 || version == 3 {
		cl.Counts, err = countKVRecords(raw[off:], true)
	} else {
		cl.Counts, err = countTypedRecords(raw[off:])
	}
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// changelogVersion mimics readUTF + "v<N>" parsing; it returns the version
// and the offset of what follows (0 for v1).
func changelogVersion(raw []byte) (int, int) {
	if len(raw) < 2 {
		return 1, 0
	}
	n := int(binary.BigEndian.Uint16(raw))
	if len(raw)-2 < n {
		return 1, 0
	}
	s, err := decodeModifiedUTF8(raw[2 : 2+n])
	if err != nil || !strings.HasPrefix(s, "v") {
		return 1, 0
	}
	v, err := strconv.ParseInt(s[1:], 10, 16)
	if err != nil {
		return 1, 0
	}
	return int(v), 2 + n
}

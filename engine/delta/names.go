package delta

import (
	"fmt"
	"strconv"
	"strings"
)

// Keys of the log, relative to the table root.
const (
	LogDir            = "_delta_log/"
	SidecarDir        = LogDir + "_sidecars/"
	LastCheckpointKey = LogDir + "_last_checkpoint"
)

// FileKind says what a file in _delta_log/ is.
type FileKind uint8

const (
	// KindOther: not a log file this package reads (.crc, temp files, …).
	KindOther FileKind = iota
	// KindCommit: N.json, the actions of version N.
	KindCommit
	// KindCheckpoint: N.checkpoint.parquet, a classic single-file checkpoint.
	KindCheckpoint
	// KindMultiPartCheckpoint: N.checkpoint.P.T.parquet, part P of T.
	KindMultiPartCheckpoint
	// KindV2Checkpoint: N.checkpoint.<uuid>.json|parquet, a v2 checkpoint
	// whose sidecars hold the file actions.
	KindV2Checkpoint
	// KindCompacted: X.Y.compacted.json, the actions of versions X..Y
	// (an optional optimisation: the commits stay authoritative).
	KindCompacted
	// KindChecksum: N.crc.
	KindChecksum
)

func (k FileKind) String() string {
	switch k {
	case KindCommit:
		return "commit"
	case KindCheckpoint:
		return "checkpoint"
	case KindMultiPartCheckpoint:
		return "multi-part checkpoint"
	case KindV2Checkpoint:
		return "v2 checkpoint"
	case KindCompacted:
		return "log compaction"
	case KindChecksum:
		return "checksum"
	}
	return "other"
}

// IsCheckpoint reports whether k is one of the three checkpoint kinds.
func (k FileKind) IsCheckpoint() bool {
	return k == KindCheckpoint || k == KindMultiPartCheckpoint || k == KindV2Checkpoint
}

// LogFile is a parsed log file name.
type LogFile struct {
	Name    string   // the base name, e.g. "00000000000000000010.checkpoint.parquet"
	Kind    FileKind //
	Version int64    // N (X for a compaction)
	End     int64    // Y of a compaction; == Version otherwise
	Part    int      // P of a multi-part checkpoint (1-based); 1 otherwise
	Parts   int      // T of a multi-part checkpoint; 1 otherwise
	UUID    string   // the uuid of a v2 checkpoint
	Format  string   // "json" or "parquet" ("" for a checksum)
}

// Key is the file's key under the table root.
func (f LogFile) Key() string { return LogDir + f.Name }

// VersionDigits is the width of a version in a log file name.
const VersionDigits = 20

// FormatVersion is v as 20 zero-padded digits.
func FormatVersion(v int64) string { return fmt.Sprintf("%020d", v) }

// CommitKey is the key of version v's commit, "_delta_log/<20 digits>.json".
func CommitKey(v int64) string { return LogDir + FormatVersion(v) + ".json" }

// CheckpointKey is the key of a classic checkpoint at v.
func CheckpointKey(v int64) string { return LogDir + FormatVersion(v) + ".checkpoint.parquet" }

// MultiPartCheckpointKey is the key of part (1-based) of parts at v.
func MultiPartCheckpointKey(v int64, part, parts int) string {
	return fmt.Sprintf("%s%s.checkpoint.%010d.%010d.parquet", LogDir, FormatVersion(v), part, parts)
}

// V2CheckpointKey is the key of a v2 checkpoint at v (format "json" or "parquet").
func V2CheckpointKey(v int64, uuid, format string) string {
	return LogDir + FormatVersion(v) + ".checkpoint." + uuid + "." + format
}

// ParseLogName parses the base name of a file in _delta_log/. A name that
// is no log file (a .crc of Hadoop, a temp file, "_last_checkpoint") has
// Kind KindOther and ok false.
func ParseLogName(name string) (f LogFile, ok bool) {
	f = LogFile{Name: name, Part: 1, Parts: 1}
	if len(name) < VersionDigits+2 || name[VersionDigits] != '.' {
		return LogFile{Name: name}, false
	}
	v, ok := parseDigits(name[:VersionDigits])
	if !ok {
		return LogFile{Name: name}, false
	}
	f.Version, f.End = v, v
	rest := name[VersionDigits+1:]
	switch {
	case rest == "json":
		f.Kind, f.Format = KindCommit, "json"
		return f, true
	case rest == "crc":
		f.Kind = KindChecksum
		return f, true
	case rest == "checkpoint.parquet":
		f.Kind, f.Format = KindCheckpoint, "parquet"
		return f, true
	case strings.HasPrefix(rest, "checkpoint."):
		return parseCheckpointTail(f, strings.TrimPrefix(rest, "checkpoint."))
	case strings.HasSuffix(rest, ".compacted.json"):
		end, ok := parseDigits(strings.TrimSuffix(rest, ".compacted.json"))
		if !ok || len(rest) != VersionDigits+len(".compacted.json") || end < v {
			return LogFile{Name: name}, false
		}
		f.Kind, f.End, f.Format = KindCompacted, end, "json"
		return f, true
	}
	return LogFile{Name: name}, false
}

func parseCheckpointTail(f LogFile, tail string) (LogFile, bool) {
	dot := strings.LastIndexByte(tail, '.')
	if dot < 0 {
		return LogFile{Name: f.Name}, false
	}
	body, ext := tail[:dot], tail[dot+1:]
	if ext != "json" && ext != "parquet" {
		return LogFile{Name: f.Name}, false
	}
	// multi-part: 10 digits "." 10 digits, parquet only
	if ext == "parquet" && len(body) == 21 && body[10] == '.' {
		p, ok1 := parseDigits(body[:10])
		t, ok2 := parseDigits(body[11:])
		if ok1 && ok2 && p >= 1 && t >= 1 && p <= t && t <= 1<<20 {
			f.Kind, f.Part, f.Parts, f.Format = KindMultiPartCheckpoint, int(p), int(t), ext
			return f, true
		}
		return LogFile{Name: f.Name}, false
	}
	if !isUUID(body) {
		return LogFile{Name: f.Name}, false
	}
	f.Kind, f.UUID, f.Format = KindV2Checkpoint, body, ext
	return f, true
}

// parseDigits parses a non-empty run of ASCII digits that fits an int64.
func parseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// isUUID reports whether s is 8-4-4-4-12 hex digits.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

package checkpoint

import (
	"bytes"
	"context"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// sources/<i>/ holds per-source metadata: the file source's log of
// discovered files (a compactible log), Kafka's initial offsets (file 0), or
// the rate source's start time (file 0).

// FileEntry is one file the file source discovered (FileStreamSourceLog).
type FileEntry struct {
	Path      string `json:"path"`
	Timestamp int64  `json:"timestamp"`
	BatchID   int64  `json:"batchId"`
}

// DecodeFileSourceLog decodes one file of a file source log.
func DecodeFileSourceLog(data []byte) ([]FileEntry, error) {
	return decodeCompactibleLog[FileEntry](data, "file source log")
}

// ReadFileSourceLogFile reads one file (N or N.compact) of a file source
// log, streamed line by line with every line bounded (gateway.Lines): a
// compaction file holds every entry since batch 0. Decoding errors name
// the key.
func ReadFileSourceLogFile(ctx context.Context, st gateway.Store, key string) ([]FileEntry, error) {
	es, err := decodeCompactibleLines[FileEntry](gateway.Lines(ctx, st, key, 0), "file source log")
	if err != nil && gateway.KindOf(err) == nil {
		return nil, keyErr(key, err)
	}
	return es, err
}

// EncodeFileSourceLog encodes one file of a file source log (no trailing
// newline).
func EncodeFileSourceLog(entries []FileEntry) ([]byte, error) {
	return encodeCompactibleLog(entries)
}

// ReadFileSourceLog returns every entry of the file source log under dir
// (e.g. "sources/0") up to its latest batch, and that batch id.
func ReadFileSourceLog(ctx context.Context, st gateway.Store, dir string) ([]FileEntry, int64, error) {
	return readCompactibleLog[FileEntry](ctx, st, dir, "file source log")
}

// DecodeKafkaInitialOffsets decodes sources/<i>/0 of a Kafka source: one
// leading byte (0x00; Spark 2.1.0 wrote an arbitrary one), then "v1\n" and
// the partition offsets JSON; Spark 2.1.0 wrote no version line.
func DecodeKafkaInitialOffsets(data []byte) (map[string]map[int32]int64, error) {
	if len(data) < 2 {
		return nil, truncatedf("kafka initial offsets: %d bytes", len(data))
	}
	content := string(data[1:])
	if content[0] == 'v' {
		line, rest, ok := strings.Cut(content, "\n")
		if !ok {
			return nil, truncatedf("kafka initial offsets: no newline after the version")
		}
		if _, err := parseVersionLine(line, 1, "kafka initial offsets"); err != nil {
			return nil, err
		}
		content = rest
	}
	return DecodeKafkaOffsets(content)
}

// EncodeKafkaInitialOffsets returns sources/<i>/0 as Spark ≥ 2.2 writes it.
func EncodeKafkaInitialOffsets(m map[string]map[int32]int64) []byte {
	return append([]byte("\x00v1\n"), EncodeKafkaOffsets(m)...)
}

// Source log kinds reported by ClassifySourceLogFile.
const (
	SourceLogFile         = "file-source-log"
	SourceLogKafkaInitial = "kafka-initial-offsets"
	SourceLogRateStart    = "rate-start-time"
	SourceLogUnknown      = "unknown"
)

// SourceLogInfo describes one decoded file of sources/<i>/.
type SourceLogInfo struct {
	Kind        string                 `json:"kind"`
	Entries     int                    `json:"entries,omitempty"`       // file source log
	Initial     []KafkaPartitionOffset `json:"initial,omitempty"`       // kafka
	StartTimeMs *int64                 `json:"start_time_ms,omitempty"` // rate
}

// ClassifySourceLogFile recognises the content of a sources/<i>/ file. An
// error is returned when the file is recognised but does not decode.
func ClassifySourceLogFile(data []byte) (SourceLogInfo, error) {
	if len(data) == 0 {
		return SourceLogInfo{Kind: SourceLogUnknown}, truncatedf("empty source log file")
	}
	if data[0] != 'v' {
		m, err := DecodeKafkaInitialOffsets(data)
		if err != nil {
			return SourceLogInfo{Kind: SourceLogUnknown}, err
		}
		info := SourceLogInfo{Kind: SourceLogKafkaInitial}
		info.Initial = ParseSourceOffset(OffsetEntry{JSON: EncodeKafkaOffsets(m), Present: true}).Kafka
		return info, nil
	}
	lines := splitLines(data)
	if _, err := parseVersionLine(lines[0], CompactibleLogMaxVersion, "source log"); err != nil {
		return SourceLogInfo{Kind: SourceLogUnknown}, err
	}
	if len(lines) == 2 {
		if n, err := strconv.ParseInt(strings.TrimSpace(lines[1]), 10, 64); err == nil {
			return SourceLogInfo{Kind: SourceLogRateStart, StartTimeMs: &n}, nil
		}
	}
	if len(lines) == 1 || bytes.Contains(data, []byte(`"path"`)) {
		es, err := DecodeFileSourceLog(data)
		if err != nil {
			return SourceLogInfo{Kind: SourceLogFile}, err
		}
		return SourceLogInfo{Kind: SourceLogFile, Entries: len(es)}, nil
	}
	return SourceLogInfo{Kind: SourceLogUnknown}, nil
}

package checkpoint

import (
	"context"

	"github.com/ckgate/ckgate/gateway"
)

// The file sink's log <output>/_spark_metadata/ (FileStreamSinkLog): a
// compactible log of SinkFileStatus entries. It lives in the output
// directory, not in the checkpoint.

// SinkMetadataDir is the file sink log's directory under the output path.
const SinkMetadataDir = "_spark_metadata"

// Sink log actions.
const (
	SinkActionAdd    = "add"
	SinkActionDelete = "delete"
)

// SinkFileStatus is one file entry of the file sink log.
type SinkFileStatus struct {
	Path             string `json:"path"`
	Size             int64  `json:"size"`
	IsDir            bool   `json:"isDir"`
	ModificationTime int64  `json:"modificationTime"`
	BlockReplication int    `json:"blockReplication"`
	BlockSize        int64  `json:"blockSize"`
	Action           string `json:"action"`
}

// DecodeFileSinkLog decodes one file of the file sink log.
func DecodeFileSinkLog(data []byte) ([]SinkFileStatus, error) {
	return decodeCompactibleLog[SinkFileStatus](data, "file sink log")
}

// EncodeFileSinkLog encodes one file of the file sink log (no trailing
// newline).
func EncodeFileSinkLog(entries []SinkFileStatus) ([]byte, error) {
	return encodeCompactibleLog(entries)
}

// CompactSinkLog drops the files that a "delete" entry names, as Spark's
// FileStreamSinkLog.compactLogs does.
func CompactSinkLog(entries []SinkFileStatus) []SinkFileStatus {
	deleted := map[string]bool{}
	for _, e := range entries {
		if e.Action == SinkActionDelete {
			deleted[e.Path] = true
		}
	}
	if len(deleted) == 0 {
		return entries
	}
	out := make([]SinkFileStatus, 0, len(entries))
	for _, e := range entries {
		if !deleted[e.Path] {
			out = append(out, e)
		}
	}
	return out
}

// ReadFileSinkLog returns the files the sink log under dir (an output
// directory's "_spark_metadata") holds up to its latest batch, and that
// batch id: Spark's allFiles.
func ReadFileSinkLog(ctx context.Context, st gateway.Store, dir string) ([]SinkFileStatus, int64, error) {
	es, latest, err := readCompactibleLog[SinkFileStatus](ctx, st, dir, "file sink log")
	if err != nil {
		return nil, latest, err
	}
	return CompactSinkLog(es), latest, nil
}

// ReadFileSinkLogTail is ReadFileSinkLog for a sink log that need not start
// at batch 0 (an output whose first batch is a restored run's boundary):
// the files of its batches from its latest compaction file on, or from its
// first batch when it has none, to its latest.
func ReadFileSinkLogTail(ctx context.Context, st gateway.Store, dir string) ([]SinkFileStatus, int64, error) {
	es, latest, err := readCompactibleTail[SinkFileStatus](ctx, st, dir, "file sink log")
	if err != nil {
		return nil, latest, err
	}
	return CompactSinkLog(es), latest, nil
}

package engine

import (
	"github.com/ckgate/ckgate/engine/operator"
)

// Progress reports one batch, with the fields of Spark's
// StreamingQueryProgress where they exist (batchId, numInputRows,
// durationMs, eventTime, stateOperators, sources, sink) and ckgate's own
// counters under "ckgate".
type Progress struct {
	ID                     string            `json:"id"`
	RunID                  string            `json:"runId"`
	Name                   string            `json:"name"`
	Timestamp              string            `json:"timestamp"`
	BatchID                int64             `json:"batchId"`
	NumInputRows           int64             `json:"numInputRows"`
	InputRowsPerSecond     float64           `json:"inputRowsPerSecond"`
	ProcessedRowsPerSecond float64           `json:"processedRowsPerSecond"`
	DurationMs             map[string]int64  `json:"durationMs"`
	EventTime              map[string]string `json:"eventTime,omitempty"`
	StateOperators         []StateOperator   `json:"stateOperators"`
	Sources                []SourceProgress  `json:"sources"`
	Sink                   SinkProgress      `json:"sink"`
	Ckgate                 BatchCounters     `json:"ckgate"`
}

// StateOperator is Spark's StateOperatorProgress plus the files written.
type StateOperator struct {
	OperatorName              string `json:"operatorName"`
	NumRowsTotal              int64  `json:"numRowsTotal"`
	NumRowsUpdated            int64  `json:"numRowsUpdated"`
	NumRowsRemoved            int64  `json:"numRowsRemoved"`
	NumRowsDroppedByWatermark int64  `json:"numRowsDroppedByWatermark"`
	NumDroppedDuplicateRows   int64  `json:"numDroppedDuplicateRows,omitempty"`
	NumShufflePartitions      int    `json:"numShufflePartitions"`
	StateFilesWritten         int    `json:"stateFilesWritten"`
	StateBytesWritten         int64  `json:"stateBytesWritten"`
	SnapshotsWritten          int    `json:"snapshotsWritten"`
	StateFilesLoaded          int    `json:"stateFilesLoaded,omitempty"`
	StateBytesLoaded          int64  `json:"stateBytesLoaded,omitempty"`
}

// SourceProgress is Spark's SourceProgress.
type SourceProgress struct {
	Description  string `json:"description"`
	StartOffset  string `json:"startOffset"`
	EndOffset    string `json:"endOffset"`
	NumInputRows int64  `json:"numInputRows"`
}

// SinkProgress is Spark's SinkProgress.
type SinkProgress struct {
	Description   string `json:"description"`
	NumOutputRows int64  `json:"numOutputRows"`
	Skipped       bool   `json:"skipped,omitempty"` // committed by an earlier attempt
}

// BatchCounters are ckgate's own per-batch facts.
type BatchCounters struct {
	Epoch            uint64 `json:"epoch"`
	Rerun            bool   `json:"rerun,omitempty"`  // re-run of a logged batch after a restart
	NoData           bool   `json:"noData,omitempty"` // a no-data batch (watermark advance)
	AdoptedOffsets   bool   `json:"adoptedOffsets,omitempty"`
	AdoptedCommit    bool   `json:"adoptedCommit,omitempty"`
	WatermarkMs      int64  `json:"watermarkMs"`
	NextWatermarkMs  int64  `json:"nextWatermarkMs"`
	LateRowsDropped  int64  `json:"lateRowsDropped"`
	FilteredRows     int64  `json:"filteredRows"`
	InvalidTimeRows  int64  `json:"invalidTimeRows"`
	CheckpointWrites int    `json:"checkpointWrites"`
	// DurationUs is durationMs in microseconds.
	DurationUs map[string]int64 `json:"durationUs"`
}

func stateOperator(name string, s operator.Stats, parts int) StateOperator {
	return StateOperator{OperatorName: name, NumRowsTotal: s.NumRowsTotal, NumRowsUpdated: s.NumRowsUpdated,
		NumRowsRemoved: s.NumRowsRemoved, NumDroppedDuplicateRows: s.NumRowsDroppedDups, NumShufflePartitions: parts}
}

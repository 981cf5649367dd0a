package checkpoint

import (
	"encoding/json"
	"time"
)

// BatchProgress is what ckgate's engine records about a batch in its
// commits/<N> file, as the field "ckgateProgress" (Spark's CommitLog reads
// it with json4s, which ignores fields it does not know, as it does
// "ckgateEpoch"). It is written with the commit, so it costs no store
// request of its own, and it is kept and pruned with the commit by
// retention. Spark's checkpoints have none.
type BatchProgress struct {
	// InputRows are the rows read from the source; OutputRows those handed
	// to the sink.
	InputRows  int64 `json:"inputRows"`
	OutputRows int64 `json:"outputRows"`
	// LateRowsDropped have an event time at or below the batch watermark
	// (Spark's rule): dropped. LateRowsAccepted are above the watermark but
	// inside the delay window (at or below watermark + delay): they update
	// their window or session.
	LateRowsDropped  int64 `json:"lateRowsDropped"`
	LateRowsAccepted int64 `json:"lateRowsAccepted"`
	FilteredRows     int64 `json:"filteredRows"`
	InvalidTimeRows  int64 `json:"invalidTimeRows"`
	// StateRows is the operator's rows after the batch (numRowsTotal);
	// StateRowsUpdated and StateRowsRemoved what the batch changed.
	StateRows        int64 `json:"stateRows"`
	StateRowsUpdated int64 `json:"stateRowsUpdated"`
	StateRowsRemoved int64 `json:"stateRowsRemoved"`
	// DurationMs by phase (Spark's names: latestOffset, walCommit,
	// getBatch, addBatch, ...) up to the commit write itself, which is not
	// known when the commit is encoded.
	DurationMs map[string]int64 `json:"durationMs,omitempty"`
	// StartedMs is when the batch began (epoch ms, the engine's clock).
	StartedMs int64 `json:"startedMs,omitempty"`
}

// Elapsed is the batch's measured time up to its commit: the sum of its
// phases.
func (p *BatchProgress) Elapsed() time.Duration {
	var ms int64
	for _, v := range p.DurationMs {
		ms += v
	}
	return time.Duration(ms) * time.Millisecond
}

// decodeProgress reads "ckgateProgress" leniently: Spark ignores the
// field, so a value of the wrong shape is no reason to call the commit
// corrupt; it is left out (nil).
func decodeProgress(raw json.RawMessage) *BatchProgress {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var p BatchProgress
	if json.Unmarshal(raw, &p) != nil {
		return nil
	}
	return &p
}

// writtenMs is e's modification time in epoch ms, nil when e is absent or
// the store reported none.
func (in *inspector) writtenMs(e *entry) *int64 {
	if e == nil || e.Modified.IsZero() {
		return nil
	}
	ms := e.Modified.UnixMilli()
	return &ms
}

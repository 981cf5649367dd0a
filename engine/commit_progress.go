package engine

import (
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

// commitProgress is the batch's progress as it goes into commits/N (the
// phases measured so far; the commit write itself is not yet known).
func commitProgress(begin time.Time, durUs map[string]int64, so StateOperator, stateful bool,
	in, out, late, accepted, filtered, invalid int64) *checkpoint.BatchProgress {
	p := &checkpoint.BatchProgress{
		InputRows: in, OutputRows: out, LateRowsDropped: late, LateRowsAccepted: accepted,
		FilteredRows: filtered, InvalidTimeRows: invalid, StartedMs: begin.UnixMilli(),
		DurationMs: make(map[string]int64, len(durUs)),
	}
	for k, v := range durUs {
		p.DurationMs[k] = v / 1000
	}
	if stateful {
		p.StateRows, p.StateRowsUpdated, p.StateRowsRemoved = so.NumRowsTotal, so.NumRowsUpdated, so.NumRowsRemoved
	}
	return p
}

package operator

import (
	"math"
	"time"

	"github.com/ckgate/ckgate/engine/row"
)

// EventTime returns the event time of v in epoch milliseconds: an integer
// is epoch milliseconds, a float too (truncated), a string RFC 3339 (with
// or without fractional seconds). ok is false for anything else.
func EventTime(v row.Value) (int64, bool) {
	switch v.K {
	case row.Int:
		return v.I, true
	case row.Float:
		if math.IsNaN(v.F) || math.Abs(v.F) > 1<<62 {
			return 0, false
		}
		return int64(v.F), true
	case row.String:
		t, err := time.Parse(time.RFC3339Nano, v.S)
		if err != nil {
			return 0, false
		}
		return t.UnixMilli(), true
	}
	return 0, false
}

// FormatTime formats epoch milliseconds as RFC 3339 UTC with milliseconds.
func FormatTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

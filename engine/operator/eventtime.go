package operator

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ckgate/ckgate/engine/row"
)

// Event times the engine accepts, in epoch milliseconds: 1970-01-01 to the
// end of year 9999 (RFC 3339's range). With them and any window size, gap
// or watermark delay a spec allows (at most Go's longest duration, about
// 2^43 ms), window and session bounds and watermarks cannot overflow.
const (
	MinEventTime int64 = 0
	MaxEventTime int64 = 253402300799999 // 9999-12-31T23:59:59.999Z
)

// ErrEventTimeRange: an event time outside MinEventTime..MaxEventTime.
var ErrEventTimeRange = errors.New("event time out of range")

// CheckEventTime refuses an event time the engine cannot represent.
func CheckEventTime(ms int64) error {
	if ms < MinEventTime || ms > MaxEventTime {
		return fmt.Errorf("%w: %d ms (want %d (%s) to %d (%s))", ErrEventTimeRange, ms,
			MinEventTime, FormatTime(MinEventTime), MaxEventTime, FormatTime(MaxEventTime))
	}
	return nil
}

// EventTime returns the event time of v in epoch milliseconds: an integer
// is epoch milliseconds, a float too (truncated; one beyond int64 is
// clamped, so CheckEventTime refuses it), a string RFC 3339 (with or
// without fractional seconds). ok is false for anything else (NaN too).
func EventTime(v row.Value) (int64, bool) {
	switch v.K {
	case row.Int:
		return v.I, true
	case row.Float:
		switch {
		case math.IsNaN(v.F):
			return 0, false
		case v.F >= math.MaxInt64:
			return math.MaxInt64, true
		case v.F <= math.MinInt64:
			return math.MinInt64, true
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

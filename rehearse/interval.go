package rehearse

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Interval is an event-time interval [Start, End) in epoch milliseconds.
type Interval struct {
	Start, End int64
}

func (iv Interval) String() string {
	return fmtMs(iv.Start) + ".." + fmtMs(iv.End)
}

func fmtMs(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

// ParseInterval parses START..END: each an RFC 3339 time or epoch
// milliseconds, START before END.
func ParseInterval(s string) (Interval, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "..")
	if !ok {
		return Interval{}, fmt.Errorf("interval %q: want START..END (RFC 3339 times or epoch milliseconds)", s)
	}
	start, err := parseInstant(a)
	if err != nil {
		return Interval{}, fmt.Errorf("interval %q: start: %w", s, err)
	}
	end, err := parseInstant(b)
	if err != nil {
		return Interval{}, fmt.Errorf("interval %q: end: %w", s, err)
	}
	if end <= start {
		return Interval{}, fmt.Errorf("interval %q: the end is not after the start", s)
	}
	return Interval{Start: start, End: end}, nil
}

func parseInstant(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither RFC 3339 nor epoch milliseconds", s)
	}
	return t.UnixMilli(), nil
}

package spec

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// valueBase is a valid spec that the cases below append one field to.
const valueBase = "name: q\nsource: {kind: rate, rows_per_second: 5}\nevent_time: timestamp\nsink: {kind: noop}\n"

// Non-finite numbers and out-of-range values are refused with the field
// (and its line) named.
func TestNonFiniteAndOutOfRangeValues(t *testing.T) {
	for _, tc := range []struct{ extra, field string }{
		{"state: {snapshot_ratio: .nan}", "state.snapshot_ratio"},
		{"state: {snapshot_ratio: .NaN}", "state.snapshot_ratio"},
		{"state: {snapshot_ratio: .inf}", "state.snapshot_ratio"},
		{"state: {snapshot_ratio: -.Inf}", "state.snapshot_ratio"},
		{"state: {snapshot_ratio: +.inf}", "state.snapshot_ratio"},
		{"state: {snapshot_ratio: -1.5}", "state.snapshot_ratio"},
		{"state: {snapshot_every: .nan}", "state.snapshot_every"},
		{"partitions: .inf", "partitions"},
		{"watermark: .nan", "watermark"},
		{"watermark: 9223372036854775807", "watermark"},
		{"watermark: -1s", "watermark"},
		{"trigger: {interval: 9223372036855}", "trigger.interval"},
		{"operator: {kind: tumbling_window, size: 0s}", "operator.size"},
		{"operator: {kind: tumbling_window, size: -5m}", "operator.size"},
		{"operator: {kind: sliding_window, size: 5m, slide: 10m}", "operator.slide"},
		{"operator: {kind: session_window, gap: 0}", "operator.gap"},
	} {
		_, err := Parse([]byte(valueBase + tc.extra + "\n"))
		var se *Error
		nonFinite := strings.Contains(strings.ToLower(tc.extra), ".nan") || strings.Contains(strings.ToLower(tc.extra), ".inf")
		if !errors.As(err, &se) || se.Field != tc.field || nonFinite && se.Line == 0 {
			t.Errorf("%s: got %v, want an error naming %s (with its line)", tc.extra, err, tc.field)
		}
	}
	_, err := Parse([]byte("name: q\nsource: {kind: rate, rows_per_second: 9223372036854775807}\nsink: {kind: noop}\n"))
	var se *Error
	if !errors.As(err, &se) || se.Field != "source.rows_per_second" {
		t.Errorf("rows_per_second at int64 max: %v", err)
	}
	// A spec built in Go is checked too.
	s, err := Parse([]byte(valueBase))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		c := *s
		c.State.SnapshotRatio = r
		if err := c.validate(); !errors.As(err, &se) || se.Field != "state.snapshot_ratio" {
			t.Errorf("snapshot ratio %v: %v", r, err)
		}
	}
	// The largest accepted values parse.
	for _, extra := range []string{"state: {snapshot_ratio: 1000}", "state: {snapshot_ratio: 0.5}", "watermark: 9223372036854", "watermark: 100000d"} {
		if _, err := Parse([]byte(valueBase + extra + "\n")); err != nil {
			t.Errorf("%s: %v", extra, err)
		}
	}
}

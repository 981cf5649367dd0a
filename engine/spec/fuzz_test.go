package spec

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any input either parses into a spec that validates again, or
// fails with a *spec.Error; never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	paths, _ := filepath.Glob("../../testdata/specs/*.yaml")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name: q\nsource: {kind: kafka, brokers: [a:1], topic: t}\noperator: {kind: dedup, keys: [id]}\nevent_time: ts\nsink: {kind: http, url: 'http://x/y'}\n"))
	f.Add([]byte("name: q\nsource: {kind: rate, rows_per_second: 5, keys: 3}\nevent_time: timestamp\noperator: {kind: sliding_window, size: 10m, slide: 5m, aggregates: [count, {avg: value}, {min: value}, {max: value}]}\nsink: {kind: noop}\n"))
	f.Add([]byte("a: [1, 2\n"))
	// non-finite and out-of-range numbers
	for _, v := range []string{"state: {snapshot_ratio: .nan}", "state: {snapshot_ratio: .inf}", "state: {snapshot_ratio: -.Inf}",
		"state: {snapshot_ratio: 1e400}", "watermark: 9223372036854775807", "partitions: .nan"} {
		f.Add([]byte("name: q\nsource: {kind: rate, rows_per_second: 5}\nevent_time: timestamp\nsink: {kind: noop}\n" + v + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *spec.Error: %v", err, err)
			}
			return
		}
		if err := s.validate(); err != nil {
			t.Fatalf("a parsed spec does not validate again: %v", err)
		}
		if r := s.State.SnapshotRatio; math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
			t.Fatalf("accepted snapshot ratio %v", r)
		}
		if s.Watermark < 0 || s.Operator.Size < 0 || s.Operator.Slide > s.Operator.Size || s.Operator.Gap < 0 {
			t.Fatalf("accepted watermark %v, size %v, slide %v, gap %v", s.Watermark, s.Operator.Size, s.Operator.Slide, s.Operator.Gap)
		}
	})
}

package spec

import (
	"errors"
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
	})
}

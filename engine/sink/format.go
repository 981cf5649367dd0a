package sink

import (
	"fmt"

	"github.com/ckgate/ckgate/engine/spec"
)

// FormatVersionKey is the sink option (checkpoint.PlanSettings.SinkOptions)
// that records the shape of a parquet sink's files.
const FormatVersionKey = "format_version"

// Parquet sink format versions.
const (
	// FormatStringTimes: event times and window bounds as RFC 3339
	// strings (what ckgate wrote before typed Parquet). A plan that
	// records no format version for a parquet sink has this one.
	FormatStringTimes = "1"
	// FormatTypedTimes: event times and window bounds as Parquet
	// TIMESTAMP(MICROS, adjusted to UTC).
	FormatTypedTimes = "2"
)

// FormatVersion is the format version a new sink of s gets ("" for a sink
// whose output has no typed columns).
func FormatVersion(s *spec.Spec) string {
	if s.Sink.Kind == spec.SinkFiles && s.Sink.Format == "parquet" {
		return FormatTypedTimes
	}
	return ""
}

// RecordedFormat is the format version a recorded plan's sink options say
// (for a parquet sink, FormatStringTimes when they say none).
func RecordedFormat(s *spec.Spec, opts map[string]string) string {
	if FormatVersion(s) == "" {
		return ""
	}
	if v, ok := opts[FormatVersionKey]; ok {
		return v
	}
	return FormatStringTimes
}

// formatted is a sink whose file shape follows the recorded format
// version, so that an existing sink never mixes two shapes.
type formatted interface {
	useFormat(version string) error
}

// UseFormat makes snk write the shape of format version (the one its
// plan records); a version this ckgate cannot write is an error.
func UseFormat(snk Sink, version string) error {
	f, ok := snk.(formatted)
	if !ok || version == "" {
		return nil
	}
	return f.useFormat(version)
}

func checkFormat(version string) error {
	switch version {
	case FormatStringTimes, FormatTypedTimes:
		return nil
	}
	return fmt.Errorf("sink format version %q: this ckgate writes %s (times as strings) or %s (times as TIMESTAMP)",
		version, FormatStringTimes, FormatTypedTimes)
}

package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const full = `
name: clickstream-sessions
source: {kind: files, path: data/clickstream, format: jsonl, max_files_per_batch: 10}
event_time: ts
watermark: 10m
where: 'page != "health"'
operator: {kind: session_window, keys: [user_id], gap: 30m, aggregates: [count, {sum: amount}]}
output_mode: append
sink: {kind: files, path: out/sessions, format: jsonl}
partitions: 8
trigger: {interval: 2s}
`

func TestParseIssueExample(t *testing.T) {
	s, err := Parse([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "clickstream-sessions" || s.Source.MaxFilesPerBatch != 10 || s.Watermark.D() != 10*time.Minute ||
		s.Operator.Gap.D() != 30*time.Minute || len(s.Operator.Aggregates) != 2 || s.Operator.Aggregates[1] != (Aggregate{Func: "sum", Field: "amount"}) ||
		s.Partitions != 8 || s.Trigger.Interval.D() != 2*time.Second || s.State.SnapshotEvery != DefaultSnapshotEvery {
		t.Fatalf("parsed %+v", s)
	}
}

func TestTestdataSpecsParse(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/specs/*.yaml")
	if len(paths) == 0 {
		t.Fatal("no specs in testdata/specs")
	}
	for _, p := range paths {
		if _, err := Load(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestDefaults(t *testing.T) {
	s, err := Parse([]byte("name: q\nsource: {kind: rate, rows_per_second: 10}\nsink: {kind: console}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Operator.Kind != OpNone || s.OutputMode != Append || s.Partitions != DefaultPartitions || s.Trigger.Interval.D() != DefaultInterval {
		t.Fatalf("defaults: %+v", s)
	}
	s, err = Parse([]byte("name: q\nsource: {kind: rate, rows_per_second: 10}\nevent_time: timestamp\noperator: {kind: tumbling_window, size: 1m}\nsink: {kind: noop}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Operator.Aggregates) != 1 || s.Operator.Aggregates[0].Func != AggCount {
		t.Fatalf("default aggregate: %+v", s.Operator.Aggregates)
	}
}

// TestErrorsNameTheField: every mistake names the field it is about.
func TestErrorsNameTheField(t *testing.T) {
	base := func(edit func(string) string) string { return edit(full) }
	rep := func(old, new string) func(string) string {
		return func(s string) string {
			if !strings.Contains(s, old) {
				t.Fatalf("test bug: %q not in the spec", old)
			}
			return strings.Replace(s, old, new, 1)
		}
	}
	tests := []struct {
		name, yaml, field, msg string
	}{
		{"unknown top field", full + "partition: 3\n", "partition", `did you mean "partitions"`},
		{"unknown nested field", base(rep("max_files_per_batch", "max_file_per_batch")), "source.max_file_per_batch", "unknown field"},
		{"bad duration", base(rep("gap: 30m", "gap: 30 minutes")), "operator.gap", "duration"},
		{"negative duration", base(rep("watermark: 10m", "watermark: -10m")), "watermark", "negative"},
		{"missing gap", base(rep("gap: 30m, ", "")), "operator.gap", "required"},
		{"bad aggregate", base(rep("{sum: amount}", "{median: amount}")), "operator.aggregates[1]", "unknown aggregate"},
		{"bare sum", base(rep("{sum: amount}", "sum")), "operator.aggregates[1]", "only count stands alone"},
		{"wrong type", base(rep("partitions: 8", "partitions: many")), "partitions", "wrong type"},
		{"partitions range", base(rep("partitions: 8", "partitions: 5000")), "partitions", "1 to 4096"},
		{"bad where", base(rep(`page != "health"`, `page !== "health"`)), "where", "column"},
		{"where not a condition", base(rep(`page != "health"`, `42`)), "where", "not a condition"},
		{"source kind", base(rep("kind: files", "kind: s3")), "source.kind", "files, rate, kafka or delta"},
		{"field of another source", base(rep("format: jsonl, max", "topic: t, max")), "source.topic", "not used by a files source"},
		{"sink kind", base(rep("kind: files, path: out", "kind: kafka, path: out")), "sink.kind", "want files"},
		{"sink format", base(rep("format: jsonl}\npartitions", "format: csv}\npartitions")), "sink.format", "jsonl or parquet"},
		{"output mode", base(rep("output_mode: append", "output_mode: complete")), "output_mode", "append or update"},
		{"name", base(rep("name: clickstream-sessions", "name: 'a b'")), "name", "letters"},
		{"event time for state", base(rep("event_time: ts\n", "")), "event_time", "required by operator session_window"},
		{"list expected", base(rep("keys: [user_id]", "keys: user_id")), "operator.keys", "want a list"},
		{"mapping expected", base(rep("sink: {kind: files, path: out/sessions, format: jsonl}", "sink: files")), "sink", "mapping"},
		{"slide longer than size", strings.Replace(full, "kind: session_window, keys: [user_id], gap: 30m", "kind: sliding_window, keys: [user_id], size: 5m, slide: 10m", 1), "operator.slide", "longer"},
		{"two documents", full + "---\nname: b\n", "", "more than one YAML document"},
		{"alias", "a: &x 1\nname: *x\n", "", ""},
		{"duplicate key", full + "name: again\n", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("no error for:\n%s", tt.yaml)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *spec.Error", err, err)
			}
			if tt.field != "" && se.Field != tt.field {
				t.Fatalf("error names field %q, want %q: %v", se.Field, tt.field, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %q lacks %q", err, tt.msg)
			}
		})
	}
}

func TestLoadNamesFileAndLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "q.yaml")
	os.WriteFile(p, []byte("name: q\nsource:\n  kind: files\n  path: x\n  max_files: 3\n"), 0o644)
	_, err := Load(p)
	if err == nil || !strings.Contains(err.Error(), p+":5: source.max_files: unknown field") {
		t.Fatalf("Load: %v", err)
	}
}

func TestDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{"10m": 10 * time.Minute, "1h30m": 90 * time.Minute, "2d": 48 * time.Hour, "1500": 1500 * time.Millisecond, "500ms": 500 * time.Millisecond} {
		d, err := ParseDuration(in)
		if err != nil || d.D() != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, d, err, want)
		}
	}
	for _, in := range []string{"", "ten", "-1s", "1.5d", "-3"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) accepted", in)
		}
	}
}

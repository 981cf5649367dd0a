package compat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/spec"
)

func TestParsePlanExamples(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/plans/*.json")
	if len(files) < 4 {
		t.Fatalf("found %d plans", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := ParsePlan(data)
			if err != nil {
				t.Fatal(err)
			}
			// Encode, then parse again: the same plan
			q, err := ParsePlan(p.Encode())
			if err != nil {
				t.Fatalf("re-parse: %v\n%s", err, p.Encode())
			}
			if string(q.Encode()) != string(p.Encode()) {
				t.Fatalf("round trip:\n%s\n%s", p.Encode(), q.Encode())
			}
			if res := Compare(&Recorded{Plan: p, Writer: WriterSpark}, q); !res.Compatible || len(res.Changes) != 0 {
				t.Fatalf("a plan differs from itself: %+v", res.Changes)
			}
		})
	}
}

func TestParsePlanErrors(t *testing.T) {
	for _, tc := range []struct{ in, field, msg string }{
		{`{"version": 2, "sources": []}`, "version", "understands version 1"},
		{`{"version": 1}`, "sources", "missing"},
		{`{"version": 1, "sources": [{}]}`, "sources[0].kind", "missing"},
		{`{"version": 1, "sources": [], "oprators": []}`, "", "unknown field \"oprators\""},
		{`{"version": 1, "sources": [], "operators": [{"kind": "agg"}]}`, "operators[0].kind", `"agg"`},
		{`{"version": 1, "sources": [], "operators": [{"kind": "dedup", "id": 1}, {"kind": "dedup", "id": 1}]}`, "operators[1].id", "two operators"},
		{`{"version": 1, "sources": [], "operators": [{"kind": "dedup", "keys": ["a strin"]}]}`, "", `unknown type "strin"`},
		{`{"version": 1, "sources": [], "operators": [{"kind": "dedup", "keys": [{"name": "a", "typ": "int"}]}]}`, "", `unknown field "typ"`},
		{`{"version": 1, "sources": [], "operators": [{"kind": "aggregate", "window": {}}]}`, "operators[0].window", "size"},
		{`{"version": 1, "sources": [], "operators": [{"kind": "dedup", "stores": [{"key": []}]}]}`, "operators[0].stores[0].name", "missing"},
		{`{"version": 1, "sources": [], "watermark": "soon"}`, "", `duration "soon"`},
		{`{"version": 1, "sources": [], "output_mode": "upsert"}`, "output_mode", "append, update or complete"},
		{`{"version": 1, "sources": [{"kind": "kafka", "topic_pattern": "("}]}`, "sources[0].topic_pattern", "missing closing"},
		{`{"version": 1, "sources": []} {}`, "", "more than one JSON value"},
		{`{"version": "1", "sources": []}`, "", "field version"},
		{`[`, "", "not valid JSON"},
	} {
		_, err := ParsePlan([]byte(tc.in))
		pe, ok := err.(*PlanError)
		if !ok {
			t.Errorf("%s: error %v, want a *PlanError", tc.in, err)
			continue
		}
		if pe.Field != tc.field || !strings.Contains(pe.Error(), tc.msg) {
			t.Errorf("%s: %q (field %q), want field %q and %q", tc.in, pe.Error(), pe.Field, tc.field, tc.msg)
		}
	}
}

func TestFieldForms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"_1 string"`, "_1 string"},
		{`"_1 integer not null"`, "_1 int not null"},
		{`"w struct<start: timestamp, end: timestamp> NOT NULL"`, "w struct<start:timestamp,end:timestamp> not null"},
		{`"m map<string, array<long>>"`, "m map<string,array<bigint>>"},
		{`"d decimal(10, 2)"`, "d decimal(10,2)"},
		{`"bigint"`, "bigint"},
		{`"user"`, "user"},
		{`{"name": "a", "type": "long", "nullable": false}`, "a bigint not null"},
	} {
		var f Field
		if err := f.UnmarshalJSON([]byte(tc.in)); err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if f.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.in, f.String(), tc.want)
		}
	}
	for _, bad := range []string{`"a array<int"`, `"a struct<x int>"`, `"a decimal(x)"`, `"a map<int>"`, `"a int extra"`} {
		var f Field
		if err := f.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%s: parsed as %v", bad, f)
		}
	}
	deep := `"a ` + strings.Repeat("array<", 40) + "int" + strings.Repeat(">", 40) + `"`
	var f Field
	if err := f.UnmarshalJSON([]byte(deep)); err == nil {
		t.Error("40 nested arrays parsed")
	}
}

func TestFieldsFromSparkSchema(t *testing.T) {
	js := `{"type":"struct","fields":[{"name":"w","type":{"type":"struct","fields":[{"name":"start","type":"timestamp","nullable":true,"metadata":{}}]},"nullable":false,"metadata":{}},` +
		`{"name":"l","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{}},` +
		`{"name":"m","type":{"type":"map","keyType":"string","valueType":"decimal(10,2)","valueContainsNull":true},"nullable":true,"metadata":{}},` +
		`{"name":"d","type":"void","nullable":true,"metadata":{}}]}`
	fs, err := FieldsFromSparkSchema(js)
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldsText(fs); got != "(w struct<start:timestamp> not null, l array<int>, m map<string,decimal(10,2)>, d void)" {
		t.Fatalf("got %s", got)
	}
	for _, bad := range []string{`{"type":"array"}`, `{"type":"struct","fields":[{"name":"x","type":"blob"}]}`, `nope`} {
		if _, err := FieldsFromSparkSchema(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]int64{"10s": 10_000, "10 seconds": 10_000, "interval 5 minutes": 300_000, "1h30m": 5_400_000,
		"2 days": 172_800_000, "500": 500, "1 week": 604_800_000, "250ms": 250, "3 min": 180_000} {
		d, err := ParseDuration(in)
		if err != nil || d.Ms() != want {
			t.Errorf("%q: %d %v, want %d", in, d.Ms(), err, want)
		}
	}
	for _, bad := range []string{"", "soon", "-5s", "10 fortnights"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

const rateSpecYAML = `name: rate-counts
source: {kind: rate, rows_per_second: 100, keys: 4, total_rows: 300, start: "2026-01-01T00:00:00Z", max_rows_per_batch: 100}
event_time: timestamp
watermark: 10s
where: 'value > 3'
operator: {kind: tumbling_window, keys: [key], size: 1s, aggregates: [count, {sum: value}]}
output_mode: append
sink: {kind: files, path: out}
partitions: 4
`

func TestFromSpec(t *testing.T) {
	s, err := spec.Parse([]byte(rateSpecYAML))
	if err != nil {
		t.Fatal(err)
	}
	p, err := FromSpec(s, SpecOptions{BaseDir: "/base"})
	if err != nil {
		t.Fatal(err)
	}
	src := p.Sources[0]
	if src.Kind != "rate" || src.Options["rows_per_second"] != "100" || src.Options["keys"] != "4" || src.Options["start_ms"] != "1767225600000" {
		t.Errorf("source %+v", src)
	}
	op := p.Operators[0]
	if op.Kind != KindAggregate || fieldsText(op.Keys) != "(key)" || op.Window.Size.Ms() != 1000 || strings.Join(op.Aggregates, ",") != "count(*),sum(value)" {
		t.Errorf("operator %+v", op)
	}
	if p.EventTime != "timestamp" || p.Watermark.Ms() != 10_000 || p.Filters[0] != "value > 3" || p.Partitions != 4 || p.OutputMode != "append" {
		t.Errorf("plan %+v", p)
	}
	if p.Sink.Kind != "files" || p.Sink.Path != "file:///base/out" {
		t.Errorf("sink %+v", p.Sink)
	}
}

func FuzzParsePlan(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/plans/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"version":1,"sources":[],"operators":[{"kind":"dedup","keys":["a map<string,struct<x:array<int>>> not null"]}]}`))
	f.Add([]byte(`{"version":1,"sources":[{"kind":"kafka","topic_pattern":"a.*"}],"watermark":"interval 3 hours"}`))
	f.Add([]byte(`{"version":1,"sources":[{"kind":"rate","options":{"total_rows":"3"}}],"event_time":"ts","watermark":10000,"filters":["value > 5"],"state_format":"ckgs/1","sink":{"kind":"http","options":{"batch_size":"500"}}}`))
	f.Add([]byte(`{"version":1,"sources":[],"output":[{"name":"a b","type":"int"},{"name":"int"},{},{"name":"x-y","nullable":false}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePlan(data)
		if err != nil {
			if _, ok := err.(*PlanError); !ok {
				t.Fatalf("error %T %v, want a *PlanError", err, err)
			}
			return
		}
		// what parses encodes, parses again the same, and equals itself
		q, err := ParsePlan(p.Encode())
		if err != nil {
			t.Fatalf("re-parse of %s: %v", p.Encode(), err)
		}
		if string(q.Encode()) != string(p.Encode()) {
			t.Fatalf("round trip:\n%s\n%s", p.Encode(), q.Encode())
		}
		if res := Compare(&Recorded{Plan: p, Writer: WriterSpark}, q); !res.Compatible {
			t.Fatalf("a plan is incompatible with itself: %+v", res.Changes)
		}
	})
}

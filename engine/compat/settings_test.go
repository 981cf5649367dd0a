package compat

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/spec"
)

const sessionSpec = `name: sessions
source: {kind: rate, rows_per_second: 100, keys: 4, total_rows: 300, start: "2026-01-01T00:00:00Z", max_rows_per_batch: 100}
event_time: timestamp
watermark: 10s
where: 'value > 5'
operator: {kind: session_window, keys: [key], gap: 2s, aggregates: [count, {sum: value}]}
output_mode: append
sink: {kind: http, url: "https://example.test/in?token=s3cret", headers: {Authorization: "Bearer s3cret"}}
partitions: 4
`

func parseSpec(t *testing.T, text string, repl ...string) *spec.Spec {
	t.Helper()
	for i := 0; i < len(repl); i += 2 {
		if !strings.Contains(text, repl[i]) {
			t.Fatalf("spec lacks %q", repl[i])
		}
		text = strings.Replace(text, repl[i], repl[i+1], 1)
	}
	s, err := spec.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCompareSpecs: a candidate spec against the current one, as `ckgate
// rehearse --candidate` asks: every part of the spec is compared (nothing
// unchecked), a watermark change is undefined with the late rows it
// affects, a key, window or gap change is not allowed.
func TestCompareSpecs(t *testing.T) {
	cur := parseSpec(t, sessionSpec)
	for _, tc := range []struct {
		name    string
		repl    []string
		verdict Class
		rule    string
		words   []string
	}{
		{"identical", nil, Allowed, "", nil},
		{"longer watermark", []string{"watermark: 10s", "watermark: 30s"}, Undefined, RuleWatermark,
			[]string{"late rows between max event time − 30s and max event time − 10s", "the recorded delay (10s) drops them as late"}},
		{"shorter watermark", []string{"watermark: 10s", "watermark: 4s"}, Undefined, RuleWatermark,
			[]string{"between max event time − 10s and max event time − 4s", "the proposed one (4s) drops them as late", "6s sooner"}},
		{"gap", []string{"gap: 2s", "gap: 3s"}, NotAllowed, RuleWindow, []string{"window"}},
		{"keys", []string{"keys: [key]", "keys: [value]"}, NotAllowed, RuleKeys, nil},
		{"aggregates", []string{"{sum: value}", "{max: value}"}, NotAllowed, RuleAggregates, nil},
		{"where", []string{"value > 5", "value > 6"}, Allowed, RuleFilters, []string{"the state built before the restart keeps"}},
		{"rate limit", []string{"max_rows_per_batch: 100", "max_rows_per_batch: 10"}, Allowed, RuleSourceOptions, nil},
		{"http batch size", []string{"headers:", "batch_size: 50, headers:"}, Undefined, RuleSinkOptions, []string{"sink.options.batch_size", "500", "50"}},
		{"rotated header", []string{"Bearer s3cret", "Bearer other"}, Undefined, RuleSinkOptions, []string{"headers_sha256"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := CompareSpecs(cur, parseSpec(t, sessionSpec, tc.repl...), SpecOptions{BaseDir: "/base"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Unchecked) != 0 {
				t.Errorf("unchecked: %+v", res.Unchecked)
			}
			if got := res.Verdict(); got != tc.verdict {
				t.Errorf("verdict %s, want %s: %+v", got, tc.verdict, res.Changes)
			}
			if tc.rule == "" {
				if len(res.Changes) != 0 {
					t.Errorf("changes: %+v", res.Changes)
				}
				return
			}
			if len(res.Changes) == 0 || slices.ContainsFunc(res.Changes, func(c Change) bool { return c.Rule != tc.rule }) {
				t.Fatalf("changes %+v, want only %s", res.Changes, tc.rule)
			}
			text, _ := json.Marshal(res.Changes)
			for _, w := range tc.words {
				if !strings.Contains(string(text), w) {
					t.Errorf("%s lacks %q", text, w)
				}
			}
			if strings.Contains(string(text), "s3cret") {
				t.Errorf("a secret in %s", text)
			}
		})
	}
}

// TestLateRange: the bounds follow from the recorded watermark and delay.
func TestLateRange(t *testing.T) {
	lr, reason := lateRange(10_000, 30_000, 1_000_000)
	// M = 1,000,000 + 10,000; rows in (M − 30 s, M − 10 s]
	if lr.FromLagMs != 30_000 || lr.ToLagMs != 10_000 || *lr.FromMs != 980_000 || *lr.ToMs != 1_000_000 || lr.AcceptedBy != "proposed" {
		t.Errorf("%+v", lr)
	}
	if !strings.Contains(reason, "1970-01-01T00:16:20Z up to 1970-01-01T00:16:40Z") {
		t.Errorf("reason: %s", reason)
	}
	lr, _ = lateRange(30_000, 10_000, 0)
	if lr.FromMs != nil || lr.AcceptedBy != "recorded" || lr.FromLagMs != 30_000 {
		t.Errorf("%+v", lr)
	}
}

// TestOldEnginePlan: a _ckgate/plan.json written before ckgate recorded
// its settings still reads; what it lacks is listed as unchecked by name,
// never reported as a change.
func TestOldEnginePlan(t *testing.T) {
	data, err := os.ReadFile("testdata/ckgate-plan-before-settings.json")
	if err != nil {
		t.Fatal(err)
	}
	var p checkpoint.EnginePlan
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if p.Settings != nil {
		t.Fatal("the old plan has settings")
	}
	rec := &Recorded{Plan: FromEnginePlan(&p), Writer: WriterCkgate}
	s := parseSpec(t, `name: rate-counts
source: {kind: rate, rows_per_second: 100, keys: 4, total_rows: 300, start: "2026-01-01T00:00:00Z", max_rows_per_batch: 100}
event_time: timestamp
watermark: 10s
where: 'value > 5'
operator: {kind: tumbling_window, keys: [key], size: 1s, aggregates: [count]}
output_mode: append
sink: {kind: noop}
partitions: 4
`)
	prop, err := FromSpec(s, SpecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res := Compare(rec, prop)
	if !res.Compatible || len(res.Changes) != 0 {
		t.Fatalf("changes: %+v", res.Changes)
	}
	var fields []string
	for _, u := range res.Unchecked {
		fields = append(fields, u.Field)
		if !strings.Contains(u.Reason, "did not record") {
			t.Errorf("%s: %s", u.Field, u.Reason)
		}
	}
	for _, f := range []string{"watermark", "filters", "sources[0].options", "state_format"} {
		if !slices.Contains(fields, f) {
			t.Errorf("%s not unchecked: %v", f, fields)
		}
	}
	if u := res.Unchecked[slices.Index(fields, "sources[0].options")]; !strings.Contains(u.Reason, "max_rows_per_batch, total_rows") {
		t.Errorf("the options not named: %s", u.Reason)
	}
	// with the spec that wrote it as a baseline, they are compared
	res = Compare(WithBaseline(rec, prop), prop)
	if len(res.Unchecked) != 0 || len(res.Changes) != 0 {
		t.Errorf("with a baseline: %+v %+v", res.Changes, res.Unchecked)
	}
}

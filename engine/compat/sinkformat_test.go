package compat

import (
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/sink"
)

// TestSinkFormatChange: a parquet sink whose plan records the old file
// shape (format 1, or no format version: a plan of a ckgate before typed
// Parquet) is reported against a spec whose new sink would get format 2,
// saying that ckgate keeps writing the recorded shape; the same format is
// no change, and other sink options are still compared.
func TestSinkFormatChange(t *testing.T) {
	const text = `name: pass
source: {kind: files, path: /in}
event_time: ts
sink: {kind: files, path: /out, format: parquet}
`
	for _, tc := range []struct {
		name     string
		recorded map[string]string // nil: the plan recorded no sink options
		want     string            // the recorded value shown, "" for no change
	}{
		{"none recorded", map[string]string{}, "1 (none recorded)"},
		{"no settings at all", nil, "1 (none recorded)"},
		{"format 1", map[string]string{sink.FormatVersionKey: "1"}, "1"},
		{"format 2", map[string]string{sink.FormatVersionKey: "2"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prop, err := FromSpec(parseSpec(t, text), SpecOptions{BaseDir: "/"})
			if err != nil {
				t.Fatal(err)
			}
			if prop.Sink.Options[sink.FormatVersionKey] != sink.FormatTypedTimes {
				t.Fatalf("a parquet spec's sink options %v lack format 2", prop.Sink.Options)
			}
			recPlan, _ := FromSpec(parseSpec(t, text), SpecOptions{BaseDir: "/"})
			recPlan.Sink.Options = tc.recorded
			if tc.recorded == nil {
				recPlan.setUnknown("sink_options", "_ckgate/plan.json was written by a ckgate that did not record the sink options")
			}
			res := Compare(&Recorded{Plan: recPlan, Writer: WriterCkgate}, prop)
			var got []Change
			for _, c := range res.Changes {
				if c.Rule == RuleSinkFormat {
					got = append(got, c)
				}
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("same format reported: %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("changes %+v, want one %s", res.Changes, RuleSinkFormat)
			}
			c := got[0]
			if c.Recorded != tc.want || c.Proposed != "2" || c.Class != Allowed ||
				!strings.Contains(c.Reason, "keeps writing format 1 to this sink") || !strings.Contains(c.Reason, "TIMESTAMP") {
				t.Fatalf("%+v", c)
			}
			if !res.Compatible {
				t.Fatalf("the format change made the restart incompatible: %+v", res.Changes)
			}
		})
	}
}

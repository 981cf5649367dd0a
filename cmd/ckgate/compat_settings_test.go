package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/compat"
)

// sessionRateSpec is rateSpec as a session window with a where filter.
const sessionRateSpec = `name: rate-sessions
source: {kind: rate, rows_per_second: 100, keys: 4, total_rows: 300, start: "2026-01-01T00:00:00Z", max_rows_per_batch: 100}
event_time: timestamp
watermark: 10s
where: 'value > 5'
operator: {kind: session_window, keys: [key], gap: 1s, aggregates: [count, {sum: value}]}
output_mode: append
sink: {kind: noop}
partitions: 4
`

// specVariant writes text with old replaced by new beside the checkpoint.
func specVariant(t *testing.T, cp, name, text, old, new string) string {
	t.Helper()
	if !strings.Contains(text, old) {
		t.Fatalf("spec lacks %q", old)
	}
	p := filepath.Join(filepath.Dir(cp), name+".yaml")
	if err := os.WriteFile(p, []byte(strings.Replace(text, old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func fileBytes(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCompatCkgatePlanComplete: on a checkpoint `ckgate run` wrote, compat
// compares every part of the spec (nothing unchecked), calls a watermark
// change undefined with the late rows it affects, and a key, window or gap
// change not_allowed; `ckgate run` agrees (refuses what is not allowed,
// records the changed watermark).
func TestCompatCkgatePlanComplete(t *testing.T) {
	for _, text := range []string{rateSpec, sessionRateSpec} {
		cp := runRateQuery(t, text)
		same := filepath.Join(filepath.Dir(cp), "q.yaml")
		o := compatJSON(t, ckgate(t, Options{}, "", "compat", "--format", "json", "--spec", same, cp))
		if !o.Compatible || len(o.Changes) != 0 || len(o.Unchecked) != 0 {
			t.Fatalf("the spec that wrote the checkpoint: changes %+v, unchecked %+v", o.Changes, o.Unchecked)
		}
		ckgate(t, Options{}, "", "compat", "--spec", same, cp).want(t, 0, "0 unchecked", "CHANGES: none")
	}

	cp := runRateQuery(t, sessionRateSpec)
	// 300 rows at 100 a second from 2026-01-01T00:00:00Z: the largest
	// event time is 00:00:02.99, the latest batch's watermark 10 s before
	const maxEvent = int64(1767225600000 + 2990)
	wm := specVariant(t, cp, "wm30", sessionRateSpec, "watermark: 10s", "watermark: 30s")
	ckgate(t, Options{}, "", "compat", "--spec", wm, cp).want(t, 0, "UNDEFINED", "0 unchecked",
		"late rows between max event time − 30s and max event time − 10s",
		"after 2025-12-31T23:59:32.99Z up to 2025-12-31T23:59:52.99Z", "the recorded delay (10s) drops them as late")
	o := compatJSON(t, ckgate(t, Options{}, "", "compat", "--format", "json", "--spec", wm, cp))
	if len(o.Changes) != 1 || o.Changes[0].Rule != compat.RuleWatermark || o.Changes[0].Class != compat.Undefined || len(o.Unchecked) != 0 {
		t.Fatalf("watermark: %+v %+v", o.Changes, o.Unchecked)
	}
	if l := o.Changes[0].Late; l == nil || l.FromLagMs != 30000 || l.ToLagMs != 10000 || l.AcceptedBy != "proposed" ||
		l.FromMs == nil || *l.FromMs != maxEvent-30000 || *l.ToMs != maxEvent-10000 {
		t.Fatalf("late range %+v", o.Changes[0].Late)
	}
	shorter := specVariant(t, cp, "wm4", sessionRateSpec, "watermark: 10s", "watermark: 4s")
	ckgate(t, Options{}, "", "compat", "--spec", shorter, cp).want(t, 0, "UNDEFINED", "the proposed one (4s) drops them as late")

	for _, tc := range []struct{ name, old, new, rule string }{
		{"gap", "gap: 1s", "gap: 2s", compat.RuleWindow},
		{"keys", "keys: [key]", "keys: [value]", compat.RuleKeys},
		{"aggregates", "{sum: value}", "{max: value}", compat.RuleAggregates},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fileBytes(t, filepath.Join(cp, checkpoint.PlanKey))
			sp := specVariant(t, cp, tc.name, sessionRateSpec, tc.old, tc.new)
			ckgate(t, Options{}, "", "compat", "--spec", sp, cp).want(t, 1, "NOT_ALLOWED", tc.rule, "0 unchecked")
			ckgate(t, Options{}, "", "run", "--available-now", "--checkpoint", cp, sp).wantErr(t, 1, "incompatible with the checkpoint")
			if !slices.Equal(before, fileBytes(t, filepath.Join(cp, checkpoint.PlanKey))) {
				t.Error("a refused run changed the plan")
			}
		})
	}

	// a restart with the changed watermark runs, says so and records it
	r := ckgate(t, Options{}, "", "run", "--format", "json", "--available-now", "--checkpoint", cp, wm)
	r.want(t, 0, `"settingsChanged":"watermark_ms: 10000 → 30000"`)
	ckgate(t, Options{}, "", "compat", "--spec", wm, cp).want(t, 0, "CHANGES: none", "0 unchecked")
	ckgate(t, Options{}, "", "compat", "--spec", filepath.Join(filepath.Dir(cp), "q.yaml"), cp).want(t, 0, "UNDEFINED", "watermark")
}

// TestCompatCkgateOldPlan: a _ckgate/plan.json written before ckgate
// recorded its settings (a copy in engine/compat/testdata) still reads:
// compat names what it lacks as unchecked, `ckgate run` with the same spec
// is not refused and records them.
func TestCompatCkgateOldPlan(t *testing.T) {
	cp := runRateQuery(t, rateSpec)
	old := fileBytes(t, "../../engine/compat/testdata/ckgate-plan-before-settings.json")
	if err := os.WriteFile(filepath.Join(cp, checkpoint.PlanKey), old, 0o644); err != nil {
		t.Fatal(err)
	}
	same := filepath.Join(filepath.Dir(cp), "q.yaml")
	o := compatJSON(t, ckgate(t, Options{}, "", "compat", "--format", "json", "--spec", same, cp))
	var fields []string
	for _, u := range o.Unchecked {
		fields = append(fields, u.Field)
	}
	if !o.Compatible || len(o.Changes) != 0 || !slices.Contains(fields, "watermark") || !slices.Contains(fields, "sources[0].options") ||
		!slices.Contains(fields, "state_format") {
		t.Fatalf("old plan: changes %+v, unchecked %+v", o.Changes, o.Unchecked)
	}
	ckgate(t, Options{}, "", "compat", "--spec", same, cp).want(t, 0, "UNCHECKED", "did not record the watermark delay", "max_rows_per_batch, total_rows")
	ckgate(t, Options{}, "", "run", "--format", "json", "--available-now", "--checkpoint", cp, same).want(t, 0, `"settingsChanged":"the plan did not record the settings`)
	var p checkpoint.EnginePlan
	if err := json.Unmarshal(fileBytes(t, filepath.Join(cp, checkpoint.PlanKey)), &p); err != nil {
		t.Fatal(err)
	}
	if p.Settings == nil || p.Settings.WatermarkMs != 10000 || p.Fingerprint == "" {
		t.Fatalf("not recorded: %+v", p)
	}
	ckgate(t, Options{}, "", "compat", "--spec", same, cp).want(t, 0, "CHANGES: none", "0 unchecked")
}

// TestCompatCkgateStateFormat: a checkpoint whose plan records another
// state format cannot be restored: compat says not_allowed, run refuses.
func TestCompatCkgateStateFormat(t *testing.T) {
	cp := runRateQuery(t, rateSpec)
	key := filepath.Join(cp, checkpoint.PlanKey)
	b := fileBytes(t, key)
	if !strings.Contains(string(b), `"state_format": "`+engine.StateFormat+`"`) {
		t.Fatalf("no state format in %s", b)
	}
	b = []byte(strings.Replace(string(b), `"state_format": "`+engine.StateFormat+`"`, `"state_format": "ckgs/9"`, 1))
	if err := os.WriteFile(key, b, 0o644); err != nil {
		t.Fatal(err)
	}
	same := filepath.Join(filepath.Dir(cp), "q.yaml")
	ckgate(t, Options{}, "", "compat", "--spec", same, cp).want(t, 1, "NOT_ALLOWED", compat.RuleStateFormat, "ckgs/9", "0 unchecked")
	ckgate(t, Options{}, "", "run", "--available-now", "--checkpoint", cp, same).wantErr(t, 1, "state format differs", "ckgs/9")
	if !slices.Equal(b, fileBytes(t, key)) {
		t.Error("a refused run changed the plan")
	}
}

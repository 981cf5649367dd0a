package compat

import (
	"os"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

// FuzzFromEnginePlan converts every plan the one plan reader
// (checkpoint.DecodePlan, fuzzed by checkpoint's FuzzReadPlan) accepts and
// checks the conversion never panics and returns a plan.
func FuzzFromEnginePlan(f *testing.F) {
	old, err := os.ReadFile("testdata/ckgate-plan-before-settings.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(old)
	f.Add([]byte(`{"version":1,"plan":{"operator":"tumbling_window","keys":["k"],"size_ms":1000,"aggregates":[{"Func":"sum","Field":"v"}]},"settings":{"where":"v > 1"},"sink":{"kind":"noop"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := checkpoint.DecodePlan(data)
		if err != nil {
			return
		}
		if out := FromEnginePlan(p); out == nil {
			t.Fatal("no plan")
		}
	})
}

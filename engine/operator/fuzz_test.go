package operator

import (
	"testing"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/engine/state"
)

func fuzzSpec(t testing.TB, op string) *spec.Spec {
	s, err := spec.Parse([]byte(`
name: f
source: {kind: rate, rows_per_second: 1}
event_time: timestamp
watermark: 1m
operator: ` + op + `
sink: {kind: noop}
partitions: 2
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var fuzzOps = []string{
	"{kind: tumbling_window, keys: [key], size: 1m, aggregates: [count, {sum: v}, {min: v}, {max: v}, {avg: v}]}",
	"{kind: sliding_window, keys: [key, name], size: 2m, slide: 1m}",
	"{kind: session_window, keys: [key], gap: 5m, aggregates: [count, {sum: v}]}",
	"{kind: dedup, keys: [key]}",
}

// FuzzRestore: state records read back from a file never panic an
// operator, and an operator that accepted them can run a batch and
// snapshot its state.
func FuzzRestore(f *testing.F) {
	for i, o := range fuzzOps {
		op, err := New(fuzzSpec(f, o), Config{Partitions: 2})
		if err != nil {
			f.Fatal(err)
		}
		for j := range 3 {
			r := row.Row{Names: []string{"key", "name", "v"}, Vals: []row.Value{row.IntV(int64(j)), row.StrV("n"), row.FloatV(1.5)}}
			op.Add(int64(60_000*j), &r)
		}
		for _, cs := range op.Finish(0, func(*row.Row) {}) {
			for _, c := range cs {
				f.Add(uint8(i), c.Key, c.Value, c.Delete)
			}
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, key, value []byte, del bool) {
		op, err := New(fuzzSpec(t, fuzzOps[int(which)%len(fuzzOps)]), Config{Partitions: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Restore(1, state.Change{Key: key, Value: value, Delete: del}); err != nil {
			return
		}
		r := row.Row{Names: []string{"key", "name", "v"}, Vals: []row.Value{row.IntV(1), row.StrV("n"), row.IntV(2)}}
		op.Add(1, &r)
		op.Finish(1<<40, func(*row.Row) {})
		for p := range 2 {
			op.Snapshot(p, func(state.Change) {})
		}
		_ = op.Stats()
	})
}

package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
)

// TestCommitRecordsProgress: each commits/N carries the batch's progress
// (rows in and out, late rows, state rows, phases), the inspector returns
// it with the batch, and it costs no store request of its own: one PUT of
// commits/N per batch and no other key written per batch.
func TestCommitRecordsProgress(t *testing.T) {
	ctx := context.Background()
	w := newWorld()
	writeEvents(t, w, "in", genEvents(11, 8, 30))
	o := w.Options(nil, 1)
	var mu sync.Mutex
	puts := map[string]int{}
	o.Checkpoint = gateway.Intercept(o.Checkpoint, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
		if c.Op.Mutates() {
			mu.Lock()
			puts[strings.SplitN(c.Key, "/", 2)[0]]++
			mu.Unlock()
		}
		return next(ctx)
	})
	// a 30m delay: the late events (20-40 min behind) fall on both sides of the watermark
	ps, err := runAll(ctx, mustSpec(t, strings.Replace(sessionSpec, "watermark: 10m", "watermark: 30m", 1)), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 3 {
		t.Fatalf("%d batches, want several", len(ps))
	}
	if puts["commits"] != len(ps) || puts["offsets"] != len(ps) {
		t.Fatalf("writes by top-level directory %v for %d batches: want one offsets/N and one commits/N each", puts, len(ps))
	}
	for k := range puts {
		switch k {
		case "commits", "offsets", "state", "metadata", "sources", "_ckgate":
		default:
			t.Fatalf("a write under %q: the progress must live in commits/N", k)
		}
	}
	r, err := checkpoint.Inspect(ctx, w.CP, checkpoint.Options{MaxBatches: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Batches) != len(ps) {
		t.Fatalf("inspect: %d batches, the run made %d", len(r.Batches), len(ps))
	}
	var late, accepted int64
	for i, b := range r.Batches {
		p := ps[i]
		g := b.Progress
		if g == nil {
			t.Fatalf("batch %d: no progress in commits/%d", b.ID, b.ID)
		}
		so := p.StateOperators[0]
		if g.InputRows != p.NumInputRows || g.OutputRows != p.Sink.NumOutputRows || g.LateRowsDropped != p.Ckgate.LateRowsDropped ||
			g.FilteredRows != p.Ckgate.FilteredRows || g.StateRows != so.NumRowsTotal || g.StateRowsUpdated != so.NumRowsUpdated {
			t.Fatalf("batch %d: commit progress %+v, run progress %+v", b.ID, g, p)
		}
		if _, ok := g.DurationMs["addBatch"]; !ok || g.StartedMs == 0 {
			t.Fatalf("batch %d: phases %v started %d", b.ID, g.DurationMs, g.StartedMs)
		}
		if b.OffsetsWrittenMs == nil || b.CommitWrittenMs == nil || *b.CommitWrittenMs < *b.OffsetsWrittenMs {
			t.Fatalf("batch %d: written offsets %v commit %v", b.ID, b.OffsetsWrittenMs, b.CommitWrittenMs)
		}
		late += g.LateRowsDropped
		accepted += g.LateRowsAccepted
	}
	if late == 0 || accepted == 0 {
		t.Fatalf("late rows dropped %d, accepted %d: the generated events hold both", late, accepted)
	}
}

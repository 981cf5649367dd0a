package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/gateway"
)

// TestZombieBatchIsAdopted: writer A checks the writer record for batch 2,
// then B takes the checkpoint over (forced) before A writes offsets/2. A,
// not yet aware, completes batch 2 (offsets, sink, state, commit). B, which
// planned batch 2 itself, adopts A's log entries and finds the sink batch
// committed; A's next batch is fenced. The sink ends up with exactly the
// reference rows.
func TestZombieBatchIsAdopted(t *testing.T) {
	ctx := context.Background()
	files := genEvents(9, 10, 25)
	want := sessionRows(files)
	w := inputWorld(t, files)
	s := mustSpec(t, sessionSpec)

	var b *engine.Query
	var once sync.Once
	var berr error
	oa := w.Options(nil, 1)
	oa.Checkpoint = gateway.Intercept(oa.Checkpoint, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
		if c.Op == gateway.OpPut && c.Key == "offsets/2" {
			once.Do(func() {
				ob := w.Options(nil, 2)
				ob.Session.TakeOver = gateway.Force
				b, berr = engine.Open(ctx, s, ob)
			})
		}
		return next(ctx)
	})
	a, err := engine.Open(ctx, s, oa)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		p, ran, err := a.RunBatch(ctx)
		if err != nil || !ran || p.BatchID != int64(i) {
			t.Fatalf("A's batch %d: %v %v %+v", i, ran, err, p.BatchID)
		}
	}
	if berr != nil || b == nil {
		t.Fatalf("B's take-over: %v", berr)
	}
	if _, _, err := a.RunBatch(ctx); !errors.Is(err, gateway.ErrFenced) {
		t.Fatalf("A after the take-over: %v, want ErrFenced", err)
	}
	a.Close(ctx)

	var ps []engine.Progress
	if err := b.Run(ctx, engine.Trigger{AvailableNow: true}, func(p engine.Progress) { ps = append(ps, p) }); err != nil {
		t.Fatal(err)
	}
	b.Close(ctx)
	if ps[0].BatchID != 2 || !ps[0].Ckgate.AdoptedOffsets || !ps[0].Ckgate.AdoptedCommit || !ps[0].Sink.Skipped {
		t.Fatalf("B's first batch: %+v", ps[0])
	}
	got := sinkRows(t, w.Store("out"), "mem://out/")
	if !slices.Equal(got, want) {
		t.Fatalf("sink holds %d rows, reference %d\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

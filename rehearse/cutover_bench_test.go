package rehearse_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/rehearse"
	ct "github.com/ckgate/ckgate/rehearse/cutovertest"
)

// BenchmarkCutoverRehearsal100k: a cutover rehearsal (a changed watermark)
// over 100,000 input rows in 10 batches, both runs from batch 0 with a
// restart after batch 4, on the local disk. Goal: under 10 s.
func BenchmarkCutoverRehearsal100k(b *testing.B) {
	dir := b.TempDir()
	const files, perFile, users = 10, 10_000, 2_000
	batches := make([][]ct.Event, files)
	for k := range batches {
		evs := make([]ct.Event, perFile)
		for i := range evs {
			evs[i] = ct.Event{User: fmt.Sprintf("u%04d", i%users), Ts: ct.T0 + int64(k)*10*ct.Min + int64(i)*60, Page: fmt.Sprintf("p%d", i%7), Amount: i % 100}
		}
		batches[k] = evs
	}
	in := filepath.Join(dir, "in")
	if err := ct.Write(in, batches); err != nil {
		b.Fatal(err)
	}
	cur := ct.Spec{Name: "clicks", Input: in, Sink: filepath.Join(dir, "out"), Watermark: "10m", Gap: "5m"}
	cand := cur
	cand.Watermark = "20m"
	curPath, candPath := filepath.Join(dir, "current.yaml"), filepath.Join(dir, "candidate.yaml")
	if err := cur.WriteSpec(curPath); err != nil {
		b.Fatal(err)
	}
	if err := cand.WriteSpec(candPath); err != nil {
		b.Fatal(err)
	}
	cp := filepath.Join(dir, "checkpoints", "clicks")
	if err := ct.RunProduction(context.Background(), curPath, cp); err != nil {
		b.Fatal(err)
	}
	cs, err := spec.Load(curPath)
	if err != nil {
		b.Fatal(err)
	}
	ns, err := spec.Load(candPath)
	if err != nil {
		b.Fatal(err)
	}
	from, k := int64(0), int64(4)
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		rep, err := rehearse.Cutover(context.Background(), cs, ns, rehearse.CutoverOptions{
			Options:   rehearse.Options{Registry: registry(), BaseDir: dir, Checkpoint: cp},
			FromBatch: &from, RestartAt: &k})
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		if rep.Current.RowsIn != files*perFile || rep.Cand.RowsIn != files*perFile {
			b.Fatalf("rows in: current %d, candidate %d", rep.Current.RowsIn, rep.Cand.RowsIn)
		}
	}
	secs := total.Seconds() / float64(b.N)
	benchsum.Record(b, "cutover_rehearsal_100k_s", secs, "s", "<10")
}

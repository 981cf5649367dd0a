package sink

import (
	"context"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/internal/benchsum"
)

// deltaCommitRequests commits batches batches of rows to a new Delta table
// on the local disk through the sink and returns the store requests per
// batch beyond the data files (the log write, the txn check and the
// checkpoints every 10 commits), counted by gateway.Metrics.
func deltaCommitRequests(tb testing.TB, batches int) float64 {
	tb.Helper()
	ctx := context.Background()
	fs, err := filestore.New(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	m, err := gateway.NewMetrics(nil)
	if err != nil {
		tb.Fatal(err)
	}
	st := m.Wrap(fs, "file")
	s := &spec.Spec{Operator: spec.Operator{Kind: spec.OpNone}, EventTime: "ts", Sink: spec.Sink{Kind: spec.SinkDelta, Path: "table"}}
	env := Env{QueryID: "q", Now: time.Now, Open: func(context.Context, string) (gateway.Store, string, error) { return st, "file:///table", nil }}
	snk, err := New(ctx, s, env)
	if err != nil {
		tb.Fatal(err)
	}
	defer snk.Close()
	rows := []row.Row{{Names: []string{"id", "ts"}, Vals: []row.Value{row.IntV(1), row.IntV(1_700_000_000_000)}}}
	m.Reset()
	data := 0
	for b := range int64(batches) {
		res, err := snk.Commit(ctx, b, rows)
		if err != nil || res.Skipped {
			tb.Fatalf("batch %d: %+v %v", b, res, err)
		}
		data += len(res.Files)
	}
	return float64(m.Total()-int64(data)) / float64(batches)
}

// TestDeltaSinkRequestsPerBatch: the Delta sink's overhead per batch is at
// most 2 store requests beyond the data files (one create-only commit;
// the txn is checked against the state the writer keeps; a checkpoint and
// _last_checkpoint every 10 commits).
func TestDeltaSinkRequestsPerBatch(t *testing.T) {
	if got := deltaCommitRequests(t, 40); got > 2 {
		t.Fatalf("%.2f store requests per batch beyond the data files, want <= 2", got)
	}
}

func BenchmarkDeltaSinkCommit(b *testing.B) {
	var per float64
	for b.Loop() {
		per = deltaCommitRequests(b, 50)
	}
	benchsum.Record(b, "delta_sink_requests_per_batch", per, "requests", "<=2")
}

package delta

import (
	"context"
	"path/filepath"
	"testing"
)

func TestReconcileSinkRealTable(t *testing.T) {
	// history-delta-0.2.0 was written by a streaming Delta sink: txn
	// (e4a20b59-…, 0) from the JSON commit 3 and from checkpoint 3.
	snap, err := openTable(t, fileStore(t, filepath.Join(realTables, "history-delta-0.2.0")), "").Snapshot(context.Background(), -1)
	if err != nil {
		t.Fatal(err)
	}
	const q = "e4a20b59-dd0e-4c50-b074-e8ae4786df30"
	b := func(n int64) *int64 { return &n }
	cases := []struct {
		app             string
		offsets, commit *int64
		want            string
	}{
		{q, b(0), nil, SinkCommitted},
		{q, b(1), b(0), SinkNotInSink},
		{q, b(3), b(2), SinkUnknown},              // commits 1 and 2 missing from the sink
		{q, b(0), b(0), SinkNone},                 // nothing in flight, sink at 0
		{q, b(5), b(5), SinkUnknown},              // committed 5, sink at 0
		{"other-query", b(0), nil, SinkNotInSink}, // batch 0, no txn: -1
		{"other-query", b(4), b(3), SinkUnknown},  // no txn after earlier batches
		{q, nil, nil, SinkUnknown},                // an empty checkpoint, sink at 0
	}
	for _, c := range cases {
		r := ReconcileSink(snap, c.app, c.offsets, c.commit)
		if r.InFlight != c.want || r.Reason == "" {
			t.Errorf("%s offsets %v commit %v: %s (%s); want %s", c.app, c.offsets, c.commit, r.InFlight, r.Reason, c.want)
		}
	}
}

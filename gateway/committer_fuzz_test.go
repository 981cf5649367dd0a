package gateway_test

import (
	"context"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// FuzzReadCommitter: a committer record of any content reads as a record
// with a process, or an error naming the file; RecordCommit over it
// either fails or leaves a readable record at the batch.
func FuzzReadCommitter(f *testing.F) {
	f.Add([]byte(`{"process":"a","batch":3,"fenced":["z"],"time":"2026-12-01T00:00:00Z","write_id":"w"}`), int64(4))
	f.Add([]byte(`{"process":"","batch":1}`), int64(0))
	f.Add([]byte(`{"process":"a","batch":-9223372036854775808}`), int64(-1))
	f.Add([]byte(`[]`), int64(1))
	f.Add([]byte(`{"process":"a","fenced":null}`), int64(9))
	f.Fuzz(func(t *testing.T, data []byte, batch int64) {
		ctx := context.Background()
		s := memstore.New()
		if _, err := s.Put(ctx, "q/"+gateway.CommitterKey, data, gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
		c, _, err := gateway.ReadCommitter(ctx, s, "q")
		if err != nil {
			return
		}
		if c.Process == "" {
			t.Fatal("a record without a process read as valid")
		}
		if err := gateway.RecordCommit(ctx, s, "q", "p2", batch); err != nil {
			t.Fatalf("record over a valid record: %v", err)
		}
		got, _, err := gateway.ReadCommitter(ctx, s, "q")
		if err != nil {
			t.Fatalf("record unreadable after RecordCommit: %v", err)
		}
		if batch > c.Batch && (got.Process != "p2" || got.Batch != batch || (c.Process != "p2" && !got.IsFenced(c.Process))) {
			t.Fatalf("after commit %d by p2 over %+v: %+v", batch, c, got)
		}
	})
}

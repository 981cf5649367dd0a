// Package sessiontest is the single-writer suite every backend runs on top of
// the storage conformance suite: two sessions on one root (one proceeds, the
// other is refused or fenced), the adopt-or-fenced log rule against a real
// backend, and the request budget of a steady-state batch commit.
package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

// Entry is the log entry a test batch writes: Spark's offsets layout with
// the writer epoch in the metadata line.
func Entry(epoch uint64, batch int) []byte {
	return fmt.Appendf(nil, "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":%d,\"%s\":%d}\n{\"logOffset\":%d}\n",
		batch, gateway.EpochField, epoch, batch)
}

// Batch runs one steady-state batch commit: the writer check, offsets/n and
// commits/n, both create-only.
func Batch(ctx context.Context, sess *gateway.Session, n int) error {
	if err := sess.BeginBatch(ctx); err != nil {
		return err
	}
	for _, dir := range []string{"offsets", "commits"} {
		if _, err := sess.CreateEntry(ctx, fmt.Sprintf("%s/%d", dir, n), Entry(sess.Epoch(), n)); err != nil {
			return err
		}
	}
	return nil
}

// Options for a test session on a backend.
func Options(pid int) gateway.SessionOptions {
	return gateway.SessionOptions{QueryID: "sessiontest-query", Host: "sessiontest-host", PID: pid,
		Lease: time.Minute, Heartbeat: -1, ProcessAlive: func(int) bool { return true }}
}

// Run runs the suite; newStore returns a fresh, empty store per call.
func Run(t *testing.T, newStore func(t *testing.T) gateway.Store) {
	t.Run("second session refused, forced take-over fences the first", func(t *testing.T) {
		ctx := context.Background()
		st := newStore(t)
		a, err := gateway.OpenSession(ctx, st, Options(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := Batch(ctx, a, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := gateway.OpenSession(ctx, st, Options(2)); !errors.Is(err, gateway.ErrInUse) {
			t.Fatalf("second open: %v, want ErrInUse", err)
		}
		o := Options(2)
		o.TakeOver = gateway.Force
		b, err := gateway.OpenSession(ctx, st, o)
		if err != nil {
			t.Fatal(err)
		}
		if b.Epoch() != a.Epoch()+1 {
			t.Fatalf("epochs %d then %d, want consecutive", a.Epoch(), b.Epoch())
		}
		if err := Batch(ctx, a, 1); !errors.Is(err, gateway.ErrFenced) {
			t.Fatalf("old writer's batch: %v, want ErrFenced", err)
		}
		if err := Batch(ctx, b, 1); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(ctx); err != nil {
			t.Fatalf("closing a fenced session: %v", err)
		}
		for _, k := range []string{"offsets/0", "commits/0", "offsets/1", "commits/1"} {
			if _, err := st.Stat(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("zombie entry adopted, newer entry fences", func(t *testing.T) {
		ctx := context.Background()
		st := newStore(t)
		a, err := gateway.OpenSession(ctx, st, Options(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.BeginBatch(ctx); err != nil {
			t.Fatal(err)
		}
		o := Options(2)
		o.TakeOver = gateway.Force
		b, err := gateway.OpenSession(ctx, st, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.CreateEntry(ctx, "offsets/0", Entry(a.Epoch(), 0)); err != nil {
			t.Fatalf("zombie's entry in its window: %v", err)
		}
		e, err := b.CreateEntry(ctx, "offsets/0", Entry(b.Epoch(), 0))
		if err != nil || !e.Adopted {
			t.Fatalf("new writer on the zombie's entry: %+v, %v; want adopted", e, err)
		}
		if _, err := b.CreateEntry(ctx, "commits/0", Entry(b.Epoch(), 0)); err != nil {
			t.Fatal(err)
		}
		if _, err := a.CreateEntry(ctx, "commits/0", Entry(a.Epoch(), 0)); !errors.Is(err, gateway.ErrFenced) {
			t.Fatalf("zombie on the new writer's entry: %v, want ErrFenced", err)
		}
	})
}

// CommitRequests opens a session on st, runs warm-up batches, and returns
// how many requests count() saw during one steady-state batch. count is read
// before and after, so it can count at the HTTP transport or in a decorator.
func CommitRequests(ctx context.Context, st gateway.Store, count func() int64) (int64, error) {
	sess, err := gateway.OpenSession(ctx, st, Options(1))
	if err != nil {
		return 0, err
	}
	defer sess.Close(ctx)
	for n := range 2 {
		if err := Batch(ctx, sess, n); err != nil {
			return 0, err
		}
	}
	before := count()
	if err := Batch(ctx, sess, 2); err != nil {
		return 0, err
	}
	return count() - before, nil
}

// WantLog fails t unless st holds offsets/0..n-1 and commits/0..n-1, once
// each and nothing else (a temp file a killed writer left is never
// listed): no gap, no second entry for a batch.
func WantLog(t testing.TB, st gateway.Store, n int) {
	t.Helper()
	for _, dir := range []string{"offsets/", "commits/"} {
		var keys []string
		for a, err := range st.List(context.Background(), dir) {
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, a.Key)
		}
		if len(keys) != n {
			t.Fatalf("%s has %d entries %v, want %d", dir, len(keys), keys, n)
		}
		for i := range n {
			if _, err := st.Stat(context.Background(), fmt.Sprintf("%s%d", dir, i)); err != nil {
				t.Fatalf("gap in the log: %v", err)
			}
		}
	}
}

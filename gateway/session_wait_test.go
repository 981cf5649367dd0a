package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// TestSessionWaiterNoticesRelease: a waiter for a live owner's 30 s lease
// takes over as soon as the owner releases the checkpoint cleanly, long
// before the lease would have expired (it used to sleep out the lease).
func TestSessionWaiterNoticesRelease(t *testing.T) {
	st := memstore.New()
	base := gateway.SessionOptions{QueryID: "q-1", Host: "h", Lease: 30 * time.Second, Heartbeat: -1,
		ProcessAlive: func(int) bool { return true }}
	a := base
	a.PID = 1
	owner := open(t, st, a)

	b := base
	b.PID = 2
	b.TakeOver = gateway.Wait
	type waited struct {
		owner gateway.WriterRecord
		until time.Time
	}
	waiting := make(chan waited, 1)
	b.OnWait = func(o gateway.WriterRecord, until time.Time) { waiting <- waited{o, until} }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type opened struct {
		sess *gateway.Session
		err  error
	}
	got := make(chan opened, 1)
	go func() {
		sess, err := gateway.OpenSession(ctx, st, b)
		got <- opened{sess, err}
	}()

	var w waited
	select {
	case w = <-waiting:
	case r := <-got:
		t.Fatalf("the waiter did not wait for the live owner: %v", r.err)
	}
	if w.owner.PID != 1 || w.owner.Epoch != 1 {
		t.Fatalf("waiting for %+v, want pid 1, epoch 1", w.owner)
	}
	if err := owner.Close(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("the waiter did not take over after the owner released the checkpoint (its lease ends at %s): %v",
			w.until.Format(time.RFC3339), r.err)
	}
	defer r.sess.Close(context.Background())
	rec := r.sess.Record()
	if rec.Epoch != 2 || rec.PID != 2 {
		t.Fatalf("writer record after the take-over %+v, want epoch 2 of pid 2", rec)
	}
	if !rec.Since.Before(w.until) {
		t.Fatalf("took over at %s, not before the released lease's expiry %s", rec.Since, w.until)
	}
}

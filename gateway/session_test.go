package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/gateway/sessiontest"
)

// clock is a manual clock for lease tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func opts(c *clock, pid int) gateway.SessionOptions {
	return gateway.SessionOptions{
		QueryID: "q-1", Host: "host-a", PID: pid, Lease: 30 * time.Second,
		Heartbeat: -1, Now: c.Now, ProcessAlive: func(int) bool { return true },
	}
}

func open(t *testing.T, s gateway.Store, o gateway.SessionOptions) *gateway.Session {
	t.Helper()
	sess, err := gateway.OpenSession(context.Background(), s, o)
	if err != nil {
		t.Fatalf("open session (pid %d): %v", o.PID, err)
	}
	return sess
}

func entry(epoch uint64, batch int) []byte {
	return fmt.Appendf(nil, "v1\n{\"batchWatermarkMs\":0,\"%s\":%d}\n{\"batch\":%d}\n", gateway.EpochField, epoch, batch)
}

// runBatch is one micro-batch of a writer: check, offsets, commits.
func runBatch(ctx context.Context, sess *gateway.Session, n int) (adopted bool, err error) {
	if err := sess.BeginBatch(ctx); err != nil {
		return false, err
	}
	for _, dir := range []string{"offsets", "commits"} {
		e, err := sess.CreateEntry(ctx, fmt.Sprintf("%s/%d", dir, n), entry(sess.Epoch(), n))
		if err != nil {
			return adopted, err
		}
		adopted = adopted || e.Adopted
	}
	return adopted, nil
}

func TestSessionFirstOpenAndCleanReopen(t *testing.T) {
	ctx := context.Background()
	st, c := memstore.New(), newClock()
	a := open(t, st, opts(c, 1))
	if a.Epoch() != 1 {
		t.Fatalf("first epoch = %d, want 1", a.Epoch())
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// A clean close releases the lease: another process takes over at once.
	b := open(t, st, opts(c, 2))
	if b.Epoch() != 2 {
		t.Fatalf("epoch after reopen = %d, want 2", b.Epoch())
	}
	if _, err := a.Store().Put(ctx, "offsets/0", []byte("x"), gateway.IfAbsent()); !errors.Is(err, gateway.ErrFenced) {
		t.Fatalf("write after close: %v, want ErrFenced", err)
	}
}

func TestSessionLiveOwnerRefused(t *testing.T) {
	st, c := memstore.New(), newClock()
	a := open(t, st, opts(c, 1))
	c.Advance(10 * time.Second)
	_, err := gateway.OpenSession(context.Background(), st, opts(c, 2))
	if !errors.Is(err, gateway.ErrInUse) {
		t.Fatalf("second open: %v, want ErrInUse", err)
	}
	for _, want := range []string{"host-a:1", "since 2026-11-30T12:00:00Z", "epoch 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if a.Err() != nil {
		t.Fatalf("first session fenced by a refused open: %v", a.Err())
	}
}

func TestSessionConcurrentOpenOneWinner(t *testing.T) {
	st, c := memstore.New(), newClock()
	const n = 16
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = gateway.OpenSession(context.Background(), st, opts(c, 100+i))
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, gateway.ErrInUse):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d sessions opened, want exactly 1", won)
	}
}

func TestSessionTakeOver(t *testing.T) {
	cases := []struct {
		name  string
		setup func(c *clock, o *gateway.SessionOptions)
	}{
		{"lease expired", func(c *clock, o *gateway.SessionOptions) { c.Advance(31 * time.Second) }},
		{"forced", func(c *clock, o *gateway.SessionOptions) { o.TakeOver = gateway.Force }},
		{"same host, process gone", func(c *clock, o *gateway.SessionOptions) {
			o.ProcessAlive = func(pid int) bool { return pid != 1 }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st, c := memstore.New(), newClock()
			m, _ := gateway.NewMetrics(nil)
			a := open(t, m.Wrap(st, "mem"), opts(c, 1))
			o := opts(c, 2)
			tc.setup(c, &o)
			b := open(t, st, o)
			if b.Epoch() != 2 {
				t.Fatalf("epoch = %d, want 2", b.Epoch())
			}
			if err := a.BeginBatch(ctx); !errors.Is(err, gateway.ErrFenced) {
				t.Fatalf("old writer's batch check: %v, want ErrFenced", err)
			}
			before := m.Total()
			for _, err := range []error{
				func() error { _, err := a.CreateEntry(ctx, "offsets/0", entry(1, 0)); return err }(),
				func() error { _, err := a.Store().Put(ctx, "state/x", nil, gateway.None()); return err }(),
				a.Store().Delete(ctx, "state/x", gateway.None()),
				a.Heartbeat(ctx),
			} {
				if !errors.Is(err, gateway.ErrFenced) {
					t.Errorf("write through a fenced session: %v, want ErrFenced", err)
				}
			}
			if got := m.Total(); got != before {
				t.Fatalf("a fenced session made %d store requests", got-before)
			}
			select {
			case <-a.Done():
			default:
				t.Fatal("Done not closed after fencing")
			}
		})
	}
}

func TestSessionHeartbeatKeepsLeaseAndDetectsTakeOver(t *testing.T) {
	ctx := context.Background()
	st, c := memstore.New(), newClock()
	a := open(t, st, opts(c, 1))
	for range 3 {
		c.Advance(20 * time.Second)
		if err := a.Heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// 60 s after open the lease is still live because of the heartbeats.
	if _, err := gateway.OpenSession(ctx, st, opts(c, 2)); !errors.Is(err, gateway.ErrInUse) {
		t.Fatalf("open while heart-beating: %v, want ErrInUse", err)
	}
	f := opts(c, 3)
	f.TakeOver = gateway.Force
	open(t, st, f)
	if err := a.Heartbeat(ctx); !errors.Is(err, gateway.ErrFenced) {
		t.Fatalf("heartbeat after take-over: %v, want ErrFenced", err)
	}
}

func TestSessionWaitForSilentOwner(t *testing.T) {
	st := memstore.New()
	base := gateway.SessionOptions{QueryID: "q-1", Host: "h", Lease: 300 * time.Millisecond, Heartbeat: -1}
	a := base
	a.PID = 1
	if _, err := gateway.OpenSession(context.Background(), st, a); err != nil {
		t.Fatal(err)
	}
	b := base
	b.PID = 2
	b.ProcessAlive = func(int) bool { return true }
	b.TakeOver = gateway.Wait
	waited := false
	b.OnWait = func(owner gateway.WriterRecord, until time.Time) { waited = owner.PID == 1 }
	sess, err := gateway.OpenSession(context.Background(), st, b)
	if err != nil {
		t.Fatalf("waiting open: %v", err)
	}
	if !waited || sess.Epoch() != 2 {
		t.Fatalf("waited=%v epoch=%d, want a wait then epoch 2", waited, sess.Epoch())
	}
}

func TestSessionWaitGivesUpOnLiveOwner(t *testing.T) {
	st := memstore.New()
	a := gateway.SessionOptions{QueryID: "q-1", Host: "h", PID: 1, Lease: 400 * time.Millisecond, Heartbeat: 40 * time.Millisecond}
	owner, err := gateway.OpenSession(context.Background(), st, a)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(context.Background())
	b := gateway.SessionOptions{QueryID: "q-1", Host: "h", PID: 2, Lease: a.Lease, Heartbeat: -1,
		TakeOver: gateway.Wait, ProcessAlive: func(int) bool { return true }}
	if _, err := gateway.OpenSession(context.Background(), st, b); !errors.Is(err, gateway.ErrInUse) {
		t.Fatalf("wait on a heart-beating owner: %v, want ErrInUse", err)
	}
	if owner.Err() != nil {
		t.Fatalf("owner fenced: %v", owner.Err())
	}
}

func TestSessionSharedCheckpointRefused(t *testing.T) {
	ctx := context.Background()
	t.Run("metadata of another query", func(t *testing.T) {
		st, c := memstore.New(), newClock()
		if _, err := st.Put(ctx, "metadata", []byte(`{"id":"other"}`), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
		_, err := gateway.OpenSession(ctx, st, opts(c, 1))
		if !errors.Is(err, gateway.ErrInUse) || !strings.Contains(err.Error(), "other") {
			t.Fatalf("open: %v, want ErrInUse naming query other", err)
		}
	})
	t.Run("metadata without a query id", func(t *testing.T) {
		st, c := memstore.New(), newClock()
		if _, err := st.Put(ctx, "metadata", []byte(`{"uuid":"other"}`), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
		_, err := gateway.OpenSession(ctx, st, opts(c, 1))
		if !errors.Is(err, gateway.ErrInvalidKey) || !strings.Contains(err.Error(), "metadata") {
			t.Fatalf("open: %v, want ErrInvalidKey naming metadata (not a new checkpoint)", err)
		}
		if _, err := st.Stat(ctx, gateway.WriterKey); !errors.Is(err, gateway.ErrNotFound) {
			t.Fatalf("writer record written over unreadable metadata: %v", err)
		}
	})
	t.Run("writer record of another query", func(t *testing.T) {
		st, c := memstore.New(), newClock()
		open(t, st, opts(c, 1))
		c.Advance(time.Hour)
		o := opts(c, 2)
		o.QueryID = "q-2"
		o.TakeOver = gateway.Force
		if _, err := gateway.OpenSession(ctx, st, o); !errors.Is(err, gateway.ErrInUse) {
			t.Fatalf("open by another query: %v, want ErrInUse even when forced", err)
		}
	})
}

// A zombie (its check passed just before a take-over) does at most one more
// batch, and the log never has a gap or two entries for one batch.
func TestSessionZombieAtMostOneMoreBatch(t *testing.T) {
	for _, zombieFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("zombie writes first=%v", zombieFirst), func(t *testing.T) {
			ctx := context.Background()
			st, c := memstore.New(), newClock()
			a := open(t, st, opts(c, 1))
			for n := range 3 {
				if _, err := runBatch(ctx, a, n); err != nil {
					t.Fatal(err)
				}
			}
			// The zombie checks the writer record for batch 3, then stalls.
			if err := a.BeginBatch(ctx); err != nil {
				t.Fatal(err)
			}
			c.Advance(time.Minute)
			b := open(t, st, opts(c, 2))
			zombieBatches := 0
			if zombieFirst {
				for _, dir := range []string{"offsets", "commits"} {
					if _, err := a.CreateEntry(ctx, dir+"/3", entry(1, 3)); err != nil {
						t.Fatalf("zombie %s/3: %v", dir, err)
					}
				}
				zombieBatches++
			}
			adopted, err := runBatch(ctx, b, 3)
			if err != nil {
				t.Fatal(err)
			}
			if adopted != zombieFirst {
				t.Fatalf("new writer adopted=%v, want %v", adopted, zombieFirst)
			}
			if !zombieFirst {
				if _, err := a.CreateEntry(ctx, "offsets/3", entry(1, 3)); !errors.Is(err, gateway.ErrFenced) {
					t.Fatalf("zombie after the new writer: %v, want ErrFenced", err)
				}
			}
			if _, err := runBatch(ctx, a, 4); !errors.Is(err, gateway.ErrFenced) {
				t.Fatalf("zombie's next batch: %v, want ErrFenced", err)
			}
			if _, err := runBatch(ctx, b, 4); err != nil {
				t.Fatal(err)
			}
			if zombieBatches > 1 {
				t.Fatalf("zombie did %d batches after the take-over", zombieBatches)
			}
			sessiontest.WantLog(t, st, 5)
		})
	}
}

func TestSessionAmbiguousWrites(t *testing.T) {
	ctx := context.Background()
	t.Run("create that landed is ours", func(t *testing.T) {
		st, c := memstore.New(), newClock()
		f := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Prefix: "offsets/0", Nth: 1, Action: gateway.FailAfter})
		a := open(t, f.Wrap(st), opts(c, 1))
		e, err := a.CreateEntry(ctx, "offsets/0", entry(1, 0))
		if err != nil || e.Adopted {
			t.Fatalf("ambiguous create: %+v, %v; want success, not adopted", e, err)
		}
		if f.Fired() != 1 {
			t.Fatal("fault did not fire")
		}
	})
	t.Run("create not read back is unknown", func(t *testing.T) {
		st, c := memstore.New(), newClock()
		f := gateway.NewFaults(
			gateway.Fault{Op: gateway.OpPut, Prefix: "offsets/0", Nth: 1, Action: gateway.FailAfter},
			gateway.Fault{Op: gateway.OpGet, Prefix: "offsets/0", Nth: 1, Action: gateway.FailBefore},
		)
		a := open(t, f.Wrap(st), opts(c, 1))
		if _, err := a.CreateEntry(ctx, "offsets/0", entry(1, 0)); !errors.Is(err, gateway.ErrUnknownOutcome) {
			t.Fatalf("got %v, want ErrUnknownOutcome", err)
		}
	})
	t.Run("create that did not land keeps its error", func(t *testing.T) {
		st, c := memstore.New(), newClock()
		f := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Prefix: "offsets/0", Nth: 1, Action: gateway.FailBefore})
		a := open(t, f.Wrap(st), opts(c, 1))
		if _, err := a.CreateEntry(ctx, "offsets/0", entry(1, 0)); !errors.Is(err, gateway.ErrUnavailable) {
			t.Fatalf("got %v, want ErrUnavailable", err)
		}
	})
	t.Run("heartbeat that landed is ours", func(t *testing.T) {
		st, c := memstore.New(), newClock()
		f := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Prefix: gateway.WriterKey, Nth: 2, Action: gateway.FailAfter})
		a := open(t, f.Wrap(st), opts(c, 1))
		c.Advance(10 * time.Second)
		if err := a.Heartbeat(ctx); err != nil {
			t.Fatalf("ambiguous heartbeat: %v", err)
		}
		if err := a.Heartbeat(ctx); err != nil {
			t.Fatalf("heartbeat after an ambiguous one (version must be the landed one): %v", err)
		}
	})
}

func TestSessionLostLeaseFencesItself(t *testing.T) {
	// The first writer-record put (the open) succeeds; every renewal fails.
	f := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Prefix: gateway.WriterKey, From: 2, Action: gateway.FailBefore})
	o := gateway.SessionOptions{QueryID: "q-1", Host: "h", PID: 1, Lease: 150 * time.Millisecond, Heartbeat: 20 * time.Millisecond}
	sess, err := gateway.OpenSession(context.Background(), f.Wrap(memstore.New()), o)
	if err != nil {
		t.Fatal(err)
	}
	<-sess.Done() // never returns if the session does not notice its lease is gone
	if !errors.Is(sess.Err(), gateway.ErrFenced) || f.Fired() < 2 {
		t.Fatalf("Err = %v after %d failed renewals, want ErrFenced", sess.Err(), f.Fired())
	}
}

package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

func TestFaultCrashAfterWrites(t *testing.T) {
	ctx := context.Background()
	f := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Prefix: "offsets/1", Nth: 1, Action: gateway.CrashAfter})
	crashed := 0
	f.OnCrash = func() { crashed++ }
	inner := memstore.New()
	s := f.Wrap(inner)
	if _, err := s.Put(ctx, "offsets/0", []byte("a"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "offsets/1", []byte("b"), gateway.IfAbsent()); !errors.Is(err, gateway.ErrCrashed) || !errors.Is(err, gateway.ErrUnavailable) {
		t.Fatalf("err = %v, want a crash", err)
	}
	if _, _, err := inner.Get(ctx, "offsets/1"); err != nil {
		t.Fatalf("CrashAfter did not do the write: %v", err)
	}
	if _, _, err := s.Get(ctx, "offsets/0"); !errors.Is(err, gateway.ErrCrashed) {
		t.Fatalf("read after the crash: %v", err)
	}
	if crashed != 1 || !f.Crashed() || f.FiredBy()[gateway.CrashAfter] != 1 {
		t.Fatalf("OnCrash ran %d times, crashed %v, fired %v", crashed, f.Crashed(), f.FiredBy())
	}
}

func TestFaultTimeoutIsAmbiguous(t *testing.T) {
	ctx := context.Background()
	f := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Nth: 1, Action: gateway.Timeout})
	inner := memstore.New()
	s := f.Wrap(inner)
	_, err := s.Put(ctx, "k", []byte("x"), gateway.IfAbsent())
	if !errors.Is(err, gateway.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want an unavailable timeout", err)
	}
	if _, _, err := inner.Get(ctx, "k"); err != nil {
		t.Fatalf("the timed-out write did not happen: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	f2 := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Nth: 1, Action: gateway.Timeout, Delay: 1 << 40})
	if _, err := f2.Wrap(inner).Put(cctx, "k2", nil, gateway.IfAbsent()); !errors.Is(err, context.Canceled) {
		t.Fatalf("timeout with a cancelled context: %v", err)
	}
	if _, _, err := inner.Get(ctx, "k2"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("a cancelled timeout wrote: %v", err)
	}
}

// probabilityRun does n gets of distinct keys and returns which ones failed
// and how.
func probabilityRun(t *testing.T, seed uint64, n int) ([]string, map[gateway.FaultAction]int) {
	t.Helper()
	ctx := context.Background()
	inner := memstore.New()
	f := gateway.NewSeededFaults(seed, gateway.Fault{Probability: 0.1, OneOf: []gateway.FaultAction{gateway.FailBefore, gateway.FailAfter, gateway.Timeout}})
	s := f.Wrap(inner)
	var failed []string
	for i := range n {
		k := fmt.Sprintf("k%05d", i)
		if _, err := s.Put(ctx, k, nil, gateway.None()); err != nil {
			if !errors.Is(err, gateway.ErrUnavailable) {
				t.Fatalf("%s: %v, want ErrUnavailable", k, err)
			}
			failed = append(failed, k)
		}
	}
	if f.Fired() != len(failed) {
		t.Fatalf("Fired() = %d, %d requests failed", f.Fired(), len(failed))
	}
	return failed, f.FiredBy()
}

func TestFaultProbabilityIsSeeded(t *testing.T) {
	const n = 5000
	a, byA := probabilityRun(t, 7, n)
	b, _ := probabilityRun(t, 7, n)
	c, _ := probabilityRun(t, 8, n)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("the same seed failed different requests")
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Fatal("two seeds failed the same requests")
	}
	if rate := float64(len(a)) / n; rate < 0.08 || rate > 0.12 {
		t.Fatalf("%d of %d failed (%.3f), want about 10%%", len(a), n, rate)
	}
	for _, act := range []gateway.FaultAction{gateway.FailBefore, gateway.FailAfter, gateway.Timeout} {
		if byA[act] < len(a)/5 {
			t.Errorf("%s fired %d times of %d", act, byA[act], len(a))
		}
	}
}

func TestFaultActionNames(t *testing.T) {
	for a, want := range map[gateway.FaultAction]string{gateway.FailBefore: "fail-before", gateway.FailAfter: "fail-after",
		gateway.Delay: "delay", gateway.Crash: "crash", gateway.CrashAfter: "crash-after", gateway.Timeout: "timeout"} {
		if a.String() != want {
			t.Errorf("%d: %q, want %q", a, a.String(), want)
		}
	}
}

package gateway

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// FaultAction is what an injected fault does.
type FaultAction uint8

const (
	// FailBefore returns Err (default ErrUnavailable) without doing the request.
	FailBefore FaultAction = iota
	// FailAfter does the request, then reports Err: an ambiguous outcome.
	FailAfter
	// Delay waits Delay (or until the context ends), then does the request.
	Delay
	// Crash stops the store as a crashed process would: the request is not
	// done, OnCrash runs, and every later request fails with ErrCrashed.
	Crash
	// CrashAfter does the request, then crashes as Crash does: the process
	// died right after the store applied the write, before it saw the answer.
	CrashAfter
	// Timeout waits Delay (or until the context ends), does the request and
	// reports a timeout (ErrUnavailable wrapping context.DeadlineExceeded):
	// the caller gave up, and the request may have happened.
	Timeout
)

// String names the action: "fail-before", "fail-after", "delay", "crash",
// "crash-after", "timeout".
func (a FaultAction) String() string {
	switch a {
	case FailBefore:
		return "fail-before"
	case FailAfter:
		return "fail-after"
	case Delay:
		return "delay"
	case Crash:
		return "crash"
	case CrashAfter:
		return "crash-after"
	case Timeout:
		return "timeout"
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// ErrCrashed is returned by a store after an injected Crash.
var ErrCrashed = errors.New("injected crash")

// Fault injects one failure into the Nth request that matches Op and Prefix,
// or, with Probability, into a random share of the matching requests.
type Fault struct {
	Op     Op            // "" matches every operation
	Prefix string        // key prefix to match; "" matches every key
	Nth    int           // 1-based index among matching requests; 0 means every match from From on
	From   int           // with Nth 0: the first matching request (1-based) that fails; 0 means the first
	Action FaultAction   //
	Err    error         // for FailBefore / FailAfter; default ErrUnavailable
	Delay  time.Duration // for Delay and Timeout

	// Probability, when > 0, makes the fault fire on each matching request
	// (from From on) with this probability, drawn from the injector's seeded
	// generator (NewSeededFaults), so a run replays exactly with the same
	// seed and the same order of requests. Nth is then ignored.
	Probability float64
	// OneOf, with Probability, draws the action of each firing uniformly
	// from these instead of using Action.
	OneOf []FaultAction
}

func (f Fault) matches(c Call) bool {
	return (f.Op == "" || f.Op == c.Op) && strings.HasPrefix(c.Key, f.Prefix)
}

// Faults is a fault-injecting decorator; create it with NewFaults or
// NewSeededFaults.
type Faults struct {
	mu      sync.Mutex
	faults  []Fault
	seen    []int
	crashed bool
	fired   int
	byKind  map[FaultAction]int
	rng     *rand.Rand
	// OnCrash runs once when a Crash fault fires (a child process exits here).
	OnCrash func()
}

// NewFaults returns an injector for the given faults. Faults with a
// Probability draw from a generator seeded with 1; use NewSeededFaults to
// choose the seed.
func NewFaults(faults ...Fault) *Faults {
	return NewSeededFaults(1, faults...)
}

// NewSeededFaults returns an injector whose random faults (Probability)
// are drawn from a generator seeded with seed.
func NewSeededFaults(seed uint64, faults ...Fault) *Faults {
	return &Faults{faults: faults, seen: make([]int, len(faults)), byKind: map[FaultAction]int{},
		rng: rand.New(rand.NewPCG(seed, 0x6661756c7473))}
}

// Wrap returns s with the faults injected.
func (f *Faults) Wrap(s Store) Store {
	return Intercept(s, func(ctx context.Context, c Call, next func(context.Context) error) error {
		fault, ok, crashed := f.pick(c)
		if crashed {
			return E(string(c.Op), c.Key, ErrUnavailable, ErrCrashed)
		}
		if !ok {
			return next(ctx)
		}
		cause := fault.Err
		if cause == nil {
			cause = fmt.Errorf("injected fault")
		}
		switch fault.Action {
		case FailBefore:
			return f.fail(c, cause)
		case FailAfter:
			if err := next(ctx); err != nil {
				return err
			}
			return f.fail(c, cause)
		case Delay:
			if err := wait(ctx, c, fault.Delay); err != nil {
				return err
			}
			return next(ctx)
		case Timeout:
			if err := wait(ctx, c, fault.Delay); err != nil {
				return err
			}
			if err := next(ctx); err != nil {
				return err
			}
			return E(string(c.Op), c.Key, ErrUnavailable, fmt.Errorf("injected timeout after %s: %w", fault.Delay, context.DeadlineExceeded))
		case Crash:
			if f.OnCrash != nil {
				f.OnCrash()
			}
			return E(string(c.Op), c.Key, ErrUnavailable, ErrCrashed)
		case CrashAfter:
			err := next(ctx)
			if f.OnCrash != nil {
				f.OnCrash()
			}
			if err != nil {
				return err
			}
			return E(string(c.Op), c.Key, ErrUnavailable, ErrCrashed)
		}
		return next(ctx)
	})
}

func (f *Faults) fail(c Call, cause error) error {
	if KindOf(cause) != nil {
		return E(string(c.Op), c.Key, KindOf(cause), cause)
	}
	return E(string(c.Op), c.Key, ErrUnavailable, cause)
}

func (f *Faults) pick(c Call) (Fault, bool, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.crashed {
		return Fault{}, false, true
	}
	for i, fault := range f.faults {
		if !fault.matches(c) {
			continue
		}
		f.seen[i]++
		if fault.Probability > 0 {
			if f.seen[i] < fault.From || f.rng.Float64() >= fault.Probability {
				continue
			}
			if len(fault.OneOf) > 0 {
				fault.Action = fault.OneOf[f.rng.IntN(len(fault.OneOf))]
			}
		} else if fault.Nth != f.seen[i] && (fault.Nth != 0 || f.seen[i] < fault.From) {
			continue
		}
		f.fired++
		f.byKind[fault.Action]++
		if fault.Action == Crash || fault.Action == CrashAfter {
			f.crashed = true
		}
		return fault, true, false
	}
	return Fault{}, false, false
}

// Fired returns how many faults have fired.
func (f *Faults) Fired() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

// FiredBy returns how many faults have fired, by action.
func (f *Faults) FiredBy() map[FaultAction]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[FaultAction]int, len(f.byKind))
	for a, n := range f.byKind {
		out[a] = n
	}
	return out
}

// Crashed reports whether a Crash or CrashAfter fault has fired.
func (f *Faults) Crashed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.crashed
}

// wait sleeps d, or fails c when ctx ends first.
func wait(ctx context.Context, c Call, d time.Duration) error {
	if err := Sleep(ctx, d); err != nil {
		return E(string(c.Op), c.Key, ErrUnavailable, err)
	}
	return nil
}

package gateway

import (
	"context"
	"errors"
	"fmt"
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
)

// ErrCrashed is returned by a store after an injected Crash.
var ErrCrashed = errors.New("injected crash")

// Fault injects one failure into the Nth request that matches Op and Prefix.
type Fault struct {
	Op     Op            // "" matches every operation
	Prefix string        // key prefix to match; "" matches every key
	Nth    int           // 1-based index among matching requests; 0 means every match from From on
	From   int           // with Nth 0: the first matching request (1-based) that fails; 0 means the first
	Action FaultAction   //
	Err    error         // for FailBefore / FailAfter; default ErrUnavailable
	Delay  time.Duration // for Delay
}

func (f Fault) matches(c Call) bool {
	return (f.Op == "" || f.Op == c.Op) && strings.HasPrefix(c.Key, f.Prefix)
}

// Faults is a fault-injecting decorator; create it with NewFaults.
type Faults struct {
	mu      sync.Mutex
	faults  []Fault
	seen    []int
	crashed bool
	fired   int
	// OnCrash runs once when a Crash fault fires (a child process exits here).
	OnCrash func()
}

// NewFaults returns an injector for the given faults.
func NewFaults(faults ...Fault) *Faults {
	return &Faults{faults: faults, seen: make([]int, len(faults))}
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
			t := time.NewTimer(fault.Delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return E(string(c.Op), c.Key, ErrUnavailable, ctx.Err())
			}
			return next(ctx)
		case Crash:
			if f.OnCrash != nil {
				f.OnCrash()
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
		if fault.Nth == f.seen[i] || (fault.Nth == 0 && f.seen[i] >= fault.From) {
			f.fired++
			if fault.Action == Crash {
				f.crashed = true
			}
			return fault, true, false
		}
	}
	return Fault{}, false, false
}

// Fired returns how many faults have fired.
func (f *Faults) Fired() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

// Crashed reports whether a Crash fault has fired.
func (f *Faults) Crashed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.crashed
}

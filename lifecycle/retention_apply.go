package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ckgate/ckgate/gateway"
)

// DefaultApplyConcurrency bounds parallel deletes.
const DefaultApplyConcurrency = 16

// RetentionApplyOptions tune ApplyRetention.
type RetentionApplyOptions struct {
	// Concurrency bounds parallel deletes (0: DefaultApplyConcurrency).
	Concurrency int
	// Progress, when set, is called after each delete (from any goroutine,
	// serialised) with the number done and the total.
	Progress func(done, total int)
}

// RetentionApplyResult counts what ApplyRetention did.
type RetentionApplyResult struct {
	Deleted int `json:"deleted"`
	// Missing keys were already gone (a re-run after a failure).
	Missing int `json:"missing"`
}

// ApplyRetention deletes the keys r removes, in r.Remove's order (SortSafe: every
// planned key is unneeded by any retained version, so a failure part-way
// leaves a checkpoint that restarts; running the plan again finishes it).
// At most Concurrency deletes run at once; the first failure stops new
// deletes and is returned, naming the key. A key already gone is counted as
// missing, not an error. st is normally wrapped with the policy authorizer
// for principal kind "retention" and the plan, so a key outside the plan is
// refused (gateway.ErrDenied).
func ApplyRetention(ctx context.Context, st gateway.Store, r *RetentionResult, o RetentionApplyOptions) (RetentionApplyResult, error) {
	n := o.Concurrency
	if n <= 0 {
		n = DefaultApplyConcurrency
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		deleted, missing atomic.Int64
		mu               sync.Mutex
		done             int
		firstErr         error
		wg               sync.WaitGroup
	)
	keys := make(chan string)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	for range min(n, max(len(r.Remove), 1)) {
		wg.Go(func() {
			for k := range keys {
				err := st.Delete(ctx, k, gateway.None())
				switch {
				case err == nil:
					deleted.Add(1)
				case errors.Is(err, gateway.ErrNotFound):
					missing.Add(1)
				default:
					fail(fmt.Errorf("delete %s: %w", k, err))
					continue
				}
				if o.Progress != nil {
					mu.Lock()
					done++
					o.Progress(done, len(r.Remove))
					mu.Unlock()
				}
			}
		})
	}
feed:
	for _, d := range r.Remove {
		select {
		case keys <- d.Key:
		case <-ctx.Done():
			break feed
		}
	}
	close(keys)
	wg.Wait()
	res := RetentionApplyResult{Deleted: int(deleted.Load()), Missing: int(missing.Load())}
	if firstErr != nil {
		return res, firstErr
	}
	return res, ctx.Err()
}

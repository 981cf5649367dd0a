package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ckgate/ckgate/gateway"
	"golang.org/x/sync/errgroup"
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
	var (
		deleted, missing atomic.Int64
		mu               sync.Mutex
		done             int
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(n)
	for _, d := range r.Remove {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			err := st.Delete(gctx, d.Key, gateway.None())
			switch {
			case err == nil:
				deleted.Add(1)
			case errors.Is(err, gateway.ErrNotFound):
				missing.Add(1)
			default:
				return fmt.Errorf("delete %s: %w", d.Key, err)
			}
			if o.Progress != nil {
				mu.Lock()
				done++
				o.Progress(done, len(r.Remove))
				mu.Unlock()
			}
			return nil
		})
	}
	err := g.Wait()
	res := RetentionApplyResult{Deleted: int(deleted.Load()), Missing: int(missing.Load())}
	if err != nil {
		return res, err
	}
	return res, ctx.Err()
}

package checkpoint

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// runAll runs tasks with at most limit at a time. A task returns an error
// only when Inspect must stop (a cancelled context); the first such error
// cancels the rest and is returned.
func runAll(ctx context.Context, limit int, tasks []func(context.Context) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for _, t := range tasks {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return t(gctx) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

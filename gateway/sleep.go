package gateway

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends, whichever comes first: nil after d,
// ctx's error when it ended first (at once when it had already ended).
// Retry loops and backoffs wait with it.
func Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

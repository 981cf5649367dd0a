package validate

import (
	"context"
	"errors"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

// Backoff between the cleanup's attempts to remove a probe key.
const (
	removeBackoff    = 200 * time.Millisecond
	removeBackoffMax = 5 * time.Second
)

// removeProbeKey deletes key, and again after a retryable failure (the
// SDK's own retries spent on a store briefly unavailable, or a delete whose
// answer was lost), until ctx ends: a probe key is not left behind for a
// transient error. A missing key is removed already.
func removeProbeKey(ctx context.Context, st gateway.Store, key string) error {
	wait := removeBackoff
	for {
		err := st.Delete(ctx, key, gateway.None())
		if err == nil || errors.Is(err, gateway.ErrNotFound) {
			return nil
		}
		if !errors.Is(err, gateway.ErrUnavailable) && !errors.Is(err, gateway.ErrUnknownOutcome) {
			return err
		}
		if gateway.Sleep(ctx, wait) != nil {
			return err
		}
		wait = min(2*wait, removeBackoffMax)
	}
}

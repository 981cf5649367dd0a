package engine

import (
	"context"
	"time"
)

// Trigger says how long Run runs.
type Trigger struct {
	// AvailableNow runs batches until the source has no new data (and the
	// watermark has nothing left to emit), then returns.
	AvailableNow bool
	// MaxBatches stops after this many batches (0: no limit).
	MaxBatches int
	// Interval is the time between batch starts when running continuously
	// (default 1s).
	Interval time.Duration
}

// Run runs batches until ctx ends, the trigger is satisfied, or a batch
// fails. onProgress is called after every batch.
func (q *Query) Run(ctx context.Context, t Trigger, onProgress func(Progress)) error {
	if t.Interval <= 0 {
		t.Interval = time.Second
	}
	ran := 0
	for {
		if t.MaxBatches > 0 && ran >= t.MaxBatches {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		p, did, err := q.RunBatch(ctx)
		if err != nil {
			return err
		}
		if did {
			ran++
			if onProgress != nil {
				onProgress(p)
			}
			if t.AvailableNow {
				continue
			}
		} else if t.AvailableNow {
			return nil
		}
		wait := time.Until(start.Add(t.Interval))
		if wait <= 0 {
			continue
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-q.sess.Done():
			timer.Stop()
			return q.sess.Err()
		case <-timer.C:
		}
	}
}

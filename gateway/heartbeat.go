package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Heartbeat renews the lease by compare-and-swap of the writer record. A
// lost swap means a newer writer took over: the session is fenced.
func (s *Session) Heartbeat(ctx context.Context) error {
	rec, v, _, err := s.held()
	if err != nil {
		return err
	}
	rec.Heartbeat = s.opts.Now()
	rec.WriteID = NewWriteID()
	nv, err := s.writeRecord(ctx, rec, IfMatch(v))
	if errors.Is(err, ErrPrecondition) {
		return s.fence(fmt.Errorf("heartbeat: the writer record changed under epoch %d: %w", rec.Epoch, err))
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fenced != nil {
		return s.fenced
	}
	s.rec, s.version, s.lastRenew = rec, nv, s.opts.Now()
	return nil
}

// heartbeatLoop renews every opts.Heartbeat until Close. When renewals keep
// failing for a whole lease, another writer may take over at any moment, so
// the session fences itself.
func (s *Session) heartbeatLoop() {
	defer s.stopped.Done()
	t := time.NewTicker(s.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.Heartbeat)
		err := s.Heartbeat(ctx)
		cancel()
		if err == nil || errors.Is(err, ErrFenced) {
			continue
		}
		s.opts.Logger.Warn("heartbeat failed", "err", err)
		s.mu.Lock()
		expired := s.opts.Now().Sub(s.lastRenew) >= s.opts.Lease
		s.mu.Unlock()
		if expired {
			s.fence(fmt.Errorf("lease of %s lost: heartbeats failed since %s: %w", s.opts.Lease, s.lastRenewTime().Format(time.RFC3339), err))
		}
	}
}

func (s *Session) lastRenewTime() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastRenew
}

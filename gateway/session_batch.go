package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// BeginBatch is the check before each batch: one read of the writer record.
// A higher epoch (or another writer's record) fences the session, so it
// stops before writing anything else. When the lease is close to expiry
// (two thirds gone without a renewal) it renews instead of reading.
func (s *Session) BeginBatch(ctx context.Context) error {
	mine, _, lastRenew, err := s.held()
	if err != nil {
		return err
	}
	if s.opts.Now().Sub(lastRenew) >= s.opts.Lease*2/3 {
		return s.Heartbeat(ctx)
	}
	data, _, err := GetBounded(ctx, s.store, WriterKey, 0)
	if errors.Is(err, ErrNotFound) {
		return s.fence(fmt.Errorf("the writer record was deleted"))
	}
	if err != nil {
		return err
	}
	cur, err := ParseWriterRecord(data)
	if err != nil {
		return s.fence(err)
	}
	if cur.Epoch != mine.Epoch || cur.Owner != mine.Owner {
		return s.fence(fmt.Errorf("epoch %d (%s) took over from epoch %d", cur.Epoch, cur.Owner, mine.Epoch))
	}
	return nil
}

// Entry is the outcome of CreateEntry.
type Entry struct {
	Data    []byte  // what the key holds now: ours, or the adopted winner's
	Version Version //
	Adopted bool    // an older epoch wrote this entry first; Data is its content
}

// CreateEntry writes a log entry (offsets/N, commits/N, a sink manifest)
// create-only. Losing the race to an entry of an older epoch (a zombie that
// got there between its check and its write) adopts that entry; losing it
// to a newer epoch fences the session. Our own retried write is recognised
// by content. An outcome that cannot be read back is ErrUnknownOutcome.
func (s *Session) CreateEntry(ctx context.Context, key string, data []byte) (Entry, error) {
	if err := s.Err(); err != nil {
		return Entry{}, err
	}
	v, err := s.store.Put(ctx, key, data, IfAbsent())
	if err == nil {
		return Entry{Data: data, Version: v}, nil
	}
	if !ambiguous(err) {
		return Entry{}, err
	}
	// The winner is an entry of the same log for the same batch: bounded
	// like any checkpoint file, or by twice our own entry (a compaction
	// file of a file source or sink holds every entry since batch 0).
	got, gv, rerr := GetBounded(ctx, s.store, key, max(MaxFileBytes, 2*int64(len(data))))
	switch {
	case rerr == nil:
	case errors.Is(rerr, ErrNotFound) && !errors.Is(err, ErrExists):
		return Entry{}, err // the write did not happen: the original error stands
	default:
		return Entry{}, E("put", key, ErrUnknownOutcome, fmt.Errorf("%w; reading it back: %w", err, rerr))
	}
	if bytes.Equal(got, data) {
		return Entry{Data: data, Version: gv}, nil
	}
	epoch, perr := s.opts.EntryEpoch(key, got)
	if perr != nil {
		return Entry{}, E("put", key, ErrExists, fmt.Errorf("the existing entry is unreadable: %w", perr))
	}
	if mine := s.Epoch(); epoch > mine {
		return Entry{}, s.fence(fmt.Errorf("%s was written by epoch %d, newer than ours (%d)", key, epoch, mine))
	}
	return Entry{Data: got, Version: gv, Adopted: true}, nil
}

// Store returns the checkpoint store as this session may use it: reads pass
// through; every write after fencing fails with ErrFenced without touching
// the store.
func (s *Session) Store() Store {
	return Intercept(s.store, func(ctx context.Context, c Call, next func(context.Context) error) error {
		if c.Op.Mutates() {
			if err := s.Err(); err != nil {
				return err
			}
		}
		return next(ctx)
	})
}

// Close stops the heartbeat and releases the checkpoint (the record is
// marked released, so the next writer takes over at once). A fenced session
// closes without writing.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	select {
	case <-s.stop:
		s.mu.Unlock()
		return nil
	default:
		close(s.stop)
	}
	s.mu.Unlock()
	s.stopped.Wait()
	if s.Err() != nil {
		return nil
	}
	s.mu.Lock()
	rec, v := s.rec, s.version
	s.mu.Unlock()
	rec.Released = true
	rec.Heartbeat = s.opts.Now()
	rec.WriteID = NewWriteID()
	_, err := s.writeRecord(ctx, rec, IfMatch(v))
	if errors.Is(err, ErrPrecondition) {
		return nil // someone took over already; nothing of ours to release
	}
	s.fence(errors.New("session closed"))
	return err
}

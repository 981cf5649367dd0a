package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// TakeOver says what OpenSession does when a live owner holds the checkpoint.
type TakeOver uint8

const (
	// Refuse fails with ErrInUse, naming the owner and since when.
	Refuse TakeOver = iota
	// Wait waits for a silent owner's lease to expire and then takes over;
	// an owner that keeps heart-beating makes it give up with ErrInUse.
	Wait
	// Force takes over at once (the operator knows the owner is gone).
	Force
)

// SessionOptions configure OpenSession. QueryID is required.
type SessionOptions struct {
	QueryID   string
	Principal string
	Host      string        // default os.Hostname()
	PID       int           // default os.Getpid()
	Lease     time.Duration // default DefaultLease
	// Heartbeat is the renewal interval: default Lease/3; negative disables
	// the background heartbeat (the caller renews with Session.Heartbeat).
	Heartbeat time.Duration
	TakeOver  TakeOver
	// Now is the clock (default time.Now).
	Now func() time.Time
	// ProcessAlive reports whether pid runs on this host (default kill(pid, 0)).
	ProcessAlive func(pid int) bool
	// EntryEpoch reads the writer epoch of a log entry (default EntryEpoch).
	EntryEpoch func(key string, data []byte) (uint64, error)
	// OnWait is told when OpenSession starts waiting for an owner's lease.
	OnWait func(owner WriterRecord, until time.Time)
	Logger *slog.Logger
}

func (o *SessionOptions) defaults() error {
	if o.QueryID == "" {
		return errors.New("session: a query id is required")
	}
	if o.Host == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("session: host name: %w", err)
		}
		o.Host = h
	}
	if o.PID == 0 {
		o.PID = os.Getpid()
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = o.Lease / 3
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ProcessAlive == nil {
		o.ProcessAlive = processAlive
	}
	if o.EntryEpoch == nil {
		o.EntryEpoch = EntryEpoch
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Session is the single writer of one checkpoint root. Open it with
// OpenSession; write through Store(), CreateEntry and BeginBatch; Close it.
type Session struct {
	store Store
	opts  SessionOptions

	mu        sync.Mutex
	rec       WriterRecord // the record as last written by us
	version   Version
	lastRenew time.Time
	fenced    error // non-nil once fenced
	done      chan struct{}

	stop    chan struct{}
	stopped sync.WaitGroup
}

// held returns the writer record as last written by s, its version and
// when it was last renewed, or the error that fenced s.
func (s *Session) held() (WriterRecord, Version, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fenced != nil {
		return WriterRecord{}, "", time.Time{}, s.fenced
	}
	return s.rec, s.version, s.lastRenew, nil
}

// InUseError is the ErrInUse error: it names the live owner.
type InUseError struct {
	Owner  WriterRecord
	Reason string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("%s: checkpoint in use by %s (query %s, epoch %d) since %s, last heartbeat %s: %s",
		WriterKey, e.Owner.Owner, e.Owner.QueryID, e.Owner.Epoch,
		e.Owner.Since.UTC().Format(time.RFC3339), e.Owner.Heartbeat.UTC().Format(time.RFC3339Nano), e.Reason)
}

// Is makes errors.Is(err, ErrInUse) true.
func (e *InUseError) Is(target error) bool { return target == ErrInUse }

// OpenSession takes the checkpoint rooted at s for opts.QueryID: it checks
// the query id in `metadata` (a different one is a shared checkpoint) and
// takes WriterKey by create-only or compare-and-swap, bumping the epoch.
func OpenSession(ctx context.Context, s Store, opts SessionOptions) (*Session, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if err := checkMetadataQuery(ctx, s, opts.QueryID); err != nil {
		return nil, err
	}
	sess := &Session{store: s, opts: opts, done: make(chan struct{}), stop: make(chan struct{})}
	if err := sess.acquire(ctx); err != nil {
		return nil, err
	}
	if opts.Heartbeat > 0 {
		sess.stopped.Add(1)
		go sess.heartbeatLoop()
	}
	return sess, nil
}

// checkMetadataQuery refuses a root whose metadata names another query.
func checkMetadataQuery(ctx context.Context, s Store, queryID string) error {
	id, err := ReadMetadataID(ctx, s)
	if err != nil {
		return err
	}
	if id != "" && id != queryID {
		return &InUseError{Owner: WriterRecord{QueryID: id, Owner: MetadataKey},
			Reason: fmt.Sprintf("shared checkpoint: metadata holds query id %s, not %s", id, queryID)}
	}
	return nil
}

func (s *Session) newRecord(epoch uint64, since time.Time) WriterRecord {
	now := s.opts.Now()
	return WriterRecord{
		Epoch: epoch, QueryID: s.opts.QueryID,
		Owner: s.opts.Host + ":" + strconv.Itoa(s.opts.PID), Host: s.opts.Host, PID: s.opts.PID,
		Principal: s.opts.Principal, Since: since, Heartbeat: now,
		LeaseMs: s.opts.Lease.Milliseconds(), WriteID: NewWriteID(),
	}
}

const maxAcquireRounds = 8

func (s *Session) acquire(ctx context.Context) error {
	for range maxAcquireRounds {
		data, v, err := GetBounded(ctx, s.store, WriterKey, 0)
		if errors.Is(err, ErrNotFound) {
			rec := s.newRecord(1, s.opts.Now())
			ver, err := s.writeRecord(ctx, rec, IfAbsent())
			if errors.Is(err, ErrExists) {
				continue // another writer created it first: look again
			}
			if err != nil {
				return err
			}
			s.took(rec, ver)
			return nil
		}
		if err != nil {
			return err
		}
		cur, err := ParseWriterRecord(data)
		if err != nil {
			return E("open", WriterKey, ErrInvalidKey, err)
		}
		if cur.QueryID != s.opts.QueryID {
			return &InUseError{Owner: cur, Reason: fmt.Sprintf("shared checkpoint: it belongs to query %s, not %s", cur.QueryID, s.opts.QueryID)}
		}
		if cur.Live(s.opts.Now()) && !s.mayTakeOver(cur) {
			if s.opts.TakeOver != Wait {
				return &InUseError{Owner: cur, Reason: "its lease has not expired (wait for it, or force a take-over if that process is gone)"}
			}
			if err := s.waitForExpiry(ctx, cur); err != nil {
				return err
			}
			continue
		}
		rec := s.newRecord(cur.Epoch+1, s.opts.Now())
		ver, err := s.writeRecord(ctx, rec, IfMatch(v))
		if errors.Is(err, ErrPrecondition) {
			continue // someone else moved it: look again
		}
		if err != nil {
			return err
		}
		s.opts.Logger.Info("took over checkpoint", "previous_owner", cur.Owner, "previous_epoch", cur.Epoch, "epoch", rec.Epoch)
		s.took(rec, ver)
		return nil
	}
	return E("open", WriterKey, ErrInUse, errors.New("the writer record kept changing while opening"))
}

// mayTakeOver: a forced take-over, or an owner on this host whose process is gone.
func (s *Session) mayTakeOver(cur WriterRecord) bool {
	if s.opts.TakeOver == Force {
		return true
	}
	return cur.Host == s.opts.Host && cur.PID != s.opts.PID && cur.PID > 0 && !s.opts.ProcessAlive(cur.PID)
}

// waitForExpiry waits until cur's lease ends, then checks that the owner
// did not renew it meanwhile. While it waits it re-reads the writer record
// every leasePoll or so (see pollInterval) and returns at once when the
// owner released the checkpoint, the record is gone or another epoch
// holds it: acquire then looks again instead of sleeping out a lease
// nobody holds.
func (s *Session) waitForExpiry(ctx context.Context, cur WriterRecord) error {
	until := cur.Heartbeat.Add(cur.Lease())
	if s.opts.OnWait != nil {
		s.opts.OnWait(cur, until)
	}
	s.opts.Logger.Info("waiting for the writer's lease to expire", "owner", cur.Owner, "query_id", cur.QueryID,
		"epoch", cur.Epoch, "until", until)
	expiry := time.NewTimer(until.Sub(s.opts.Now()))
	defer expiry.Stop()
	for waiting := true; waiting; {
		poll := time.NewTimer(pollInterval(cur.Lease()))
		select {
		case <-ctx.Done():
			poll.Stop()
			return E("open", WriterKey, ErrUnavailable, ctx.Err())
		case <-expiry.C:
			poll.Stop()
			waiting = false
		case <-poll.C:
			if s.ownerLeft(ctx, cur) {
				return nil
			}
		}
	}
	data, _, err := GetBounded(ctx, s.store, WriterKey, 0)
	if err != nil {
		return err
	}
	now, err := ParseWriterRecord(data)
	if err != nil {
		return E("open", WriterKey, ErrInvalidKey, err)
	}
	if now.Epoch == cur.Epoch && now.Heartbeat.After(cur.Heartbeat) && !now.Released {
		return &InUseError{Owner: now, Reason: "the owner kept heart-beating while we waited"}
	}
	return nil
}

// leasePoll is how often, at most, a waiter re-reads the writer record: a
// clean release is noticed within about a quarter of a second, at a cost of
// a few small GETs a second while waiting.
const leasePoll = 250 * time.Millisecond

// pollInterval is the next wait between two reads of the writer record:
// leasePoll (or a quarter of a shorter lease) with up to a fifth of it
// taken off at random, so waiters of one checkpoint do not read in step.
func pollInterval(lease time.Duration) time.Duration {
	d := min(leasePoll, max(lease/4, time.Millisecond))
	return d - rand.N(d/5+1)
}

// ownerLeft reports whether the writer record no longer shows cur holding
// the checkpoint: released, gone, or moved on to another epoch. A failed or
// unreadable read is not a departure: the wait goes on to the expiry.
func (s *Session) ownerLeft(ctx context.Context, cur WriterRecord) bool {
	data, _, err := GetBounded(ctx, s.store, WriterKey, 0)
	if errors.Is(err, ErrNotFound) {
		return true
	}
	if err != nil {
		s.opts.Logger.Debug("re-reading the writer record while waiting", "err", err)
		return false
	}
	now, err := ParseWriterRecord(data)
	if err != nil {
		return false
	}
	return now.Released || now.Epoch != cur.Epoch
}

func (s *Session) took(rec WriterRecord, v Version) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec, s.version, s.lastRenew = rec, v, s.opts.Now()
}

// writeRecord writes rec under c. An error whose outcome is ambiguous (a
// lost race may be our own retried write) is resolved by reading back the
// write id; if that read fails too the error is ErrUnknownOutcome.
func (s *Session) writeRecord(ctx context.Context, rec WriterRecord, c Cond) (Version, error) {
	v, err := s.store.Put(ctx, WriterKey, rec.Encode(), c)
	if err == nil || !ambiguous(err) {
		return v, err
	}
	data, rv, rerr := GetBounded(ctx, s.store, WriterKey, 0)
	if rerr != nil {
		return "", E("put", WriterKey, ErrUnknownOutcome, fmt.Errorf("%w; reading it back: %w", err, rerr))
	}
	got, perr := ParseWriterRecord(data)
	if perr == nil && got.WriteID == rec.WriteID {
		return rv, nil // our write landed
	}
	return "", err
}

// ambiguous reports whether a failed write may have happened after all.
func ambiguous(err error) bool {
	switch KindOf(err) {
	case ErrPermission, ErrDenied, ErrInvalidKey, ErrUnsupported, ErrFenced:
		return false
	}
	return true
}

// Epoch returns the session's writer epoch.
func (s *Session) Epoch() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.Epoch
}

// Record returns the writer record as last written by this session.
func (s *Session) Record() WriterRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec
}

// Done is closed when the session is fenced.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns the fencing error, or nil while the session may write.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fenced
}

func (s *Session) fence(reason error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fenced == nil {
		s.fenced = E("write", WriterKey, ErrFenced, reason)
		close(s.done)
		s.opts.Logger.Warn("session fenced", "epoch", s.rec.Epoch, "reason", reason)
	}
	return s.fenced
}

package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/expr"
	"github.com/ckgate/ckgate/engine/operator"
	"github.com/ckgate/ckgate/engine/sink"
	"github.com/ckgate/ckgate/engine/source"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/engine/state"
	"github.com/ckgate/ckgate/gateway"
)

// Options configure Open.
type Options struct {
	// Checkpoint is the checkpoint root. Required.
	Checkpoint gateway.Store
	// CheckpointURL names it in messages and progress.
	CheckpointURL string
	// Registry opens the source and sink locations (store URLs or paths).
	// Required for files sources and sinks.
	Registry *gateway.Registry
	// BaseDir resolves relative source and sink paths (default: the
	// working directory).
	BaseDir string
	// Session is the template of the writer session (QueryID is set by
	// Open from the checkpoint's metadata, or a new id).
	Session gateway.SessionOptions
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Create, when set, is called once the checks of the checkpoint and of
	// the spec have passed, before Open writes anything: the CLI makes a
	// new local checkpoint's directory here, so that a refused run leaves
	// nothing behind.
	Create func(ctx context.Context) error
	// Console is where a console sink writes.
	Console io.Writer
	Logger  *slog.Logger
	// AdoptSink decides the take-over of a file sink another query (or
	// Spark) wrote (nil: refused, sink.ErrInUse naming the owner).
	AdoptSink sink.Adopter
}

// Query is an open streaming query: the single writer of its checkpoint.
type Query struct {
	spec  *spec.Spec
	opts  Options
	sess  *gateway.Session
	cp    gateway.Store
	id    string
	runID string
	plan  checkpoint.EnginePlan

	src   source.Source
	snk   sink.Sink
	op    operator.Operator
	where *expr.Expr
	st    *state.Store
	parts int

	tips   []state.Tip
	loaded bool
	opened []gateway.Store

	next      int64  // the next batch id
	start     string // end offset of the last committed batch
	wm        int64  // watermark of the next batch
	lastWm    int64  // watermark the last batch ran with
	rerun     *logged
	restored  Restored
	lastBatch int64
	closed    bool
}

// logged is an offsets/N entry to re-run.
type logged struct {
	batch      int64
	start, end string
	wm, ts     int64
}

// Restored says where Open found the checkpoint.
type Restored struct {
	New            bool   // no batch had run
	LastCommitted  int64  // -1 when none
	RerunBatch     int64  // -1 when none: offsets/N without commits/N
	Watermark      int64  // of the next batch
	PartitionsSpec int    // partitions in the spec
	Partitions     int    // partitions in use (fixed by the first run)
	QueryID        string //
	// PlanReplaced says what differed when the spec's plan replaced the
	// recorded one of a checkpoint that held no batch yet ("" otherwise).
	PlanReplaced string
	// SettingsChanged says which settings recorded in the plan (the
	// watermark, the where filter, source and sink options) this run
	// changes: written again, never refused ("" when none).
	SettingsChanged string
}

// ID returns the query id (from the checkpoint's metadata).
func (q *Query) ID() string { return q.id }

// RunID returns the id of this run.
func (q *Query) RunID() string { return q.runID }

// Restored says what Open found.
func (q *Query) Restored() Restored { return q.restored }

// Session returns the writer session.
func (q *Query) Session() *gateway.Session { return q.sess }

// NewUUID returns a random RFC 4122 version 4 UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := fmt.Sprintf("%x", b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Open takes the checkpoint of s (refusing one that another query or plan
// wrote), opens the source and sink, and finds where to resume.
func Open(ctx context.Context, s *spec.Spec, opts Options) (_ *Query, err error) {
	if opts.Checkpoint == nil {
		return nil, errors.New("engine: no checkpoint store")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	q := &Query{spec: s, opts: opts, runID: NewUUID(), next: 0, lastBatch: -1}
	if s.Where != "" {
		if q.where, err = expr.Parse(s.Where); err != nil {
			return nil, fmt.Errorf("where: %w", err)
		}
	}
	// refuse a damaged checkpoint before the session or anything else writes
	if err := preflight(ctx, opts.Checkpoint, s); err != nil {
		return nil, err
	}
	if err := q.checkSpec(ctx); err != nil {
		return nil, err
	}
	if opts.Create != nil {
		if err := opts.Create(ctx); err != nil {
			return nil, err
		}
	}
	id, fresh, err := readQueryID(ctx, opts.Checkpoint)
	if err != nil {
		return nil, err
	}
	q.id = id
	defer func() {
		if err != nil {
			q.Close(context.WithoutCancel(ctx))
		}
	}()
	// The sink before the session: a file sink another query owns is
	// refused before the checkpoint gets a writer record or metadata. It
	// writes only at its first commit, through the session's fencing.
	senv := sink.Env{QueryID: id, CheckpointURL: ownerLocation(opts.CheckpointURL), Adopt: opts.AdoptSink,
		Checkpoint: q.fenced(opts.Checkpoint), Open: q.openFenced, Console: opts.Console, Now: opts.Now}
	// (through a local: a failed New may return a typed nil, which Close
	// must not call)
	snk, err := sink.New(ctx, s, senv)
	if err != nil {
		return nil, err
	}
	q.snk = snk
	so := opts.Session
	so.QueryID = id
	if so.Now == nil {
		so.Now = opts.Now
	}
	if so.Logger == nil {
		so.Logger = opts.Logger
	}
	q.sess, err = gateway.OpenSession(ctx, opts.Checkpoint, so)
	if err != nil {
		return nil, err
	}
	q.cp = q.sess.Store()
	if fresh {
		md := checkpoint.StreamMetadata{ID: id}.Encode()
		if _, err := q.cp.Put(ctx, checkpoint.MetadataKey, md, gateway.IfAbsent()); err != nil && !errors.Is(err, gateway.ErrExists) {
			return nil, fmt.Errorf("write metadata: %w", err)
		}
		if got, _, err := readQueryID(ctx, q.cp); err != nil {
			return nil, err
		} else if got != id {
			return nil, fmt.Errorf("metadata: %w: holds query id %s, not %s", gateway.ErrInUse, got, id)
		}
	}
	env := source.Env{Checkpoint: q.cp, CreateEntry: q.sess.CreateEntry, Dir: "sources/0", Open: q.openInput, Now: opts.Now}
	// (through locals: a failed New may return a typed nil, which Close
	// must not call)
	src, err := source.New(ctx, s, env)
	if err != nil {
		return nil, err
	}
	q.src = src
	ps, settings := planOf(s), SettingsOf(s)
	want := checkpoint.EnginePlan{Version: 1, Name: s.Name, Fingerprint: fingerprint(ps), Stateful: ps, Partitions: s.Partitions,
		Source: q.src.Identity(), Sink: q.snk.Identity(), Settings: &settings}
	var note planNote
	if q.plan, note, err = checkPlan(ctx, q.cp, want); err != nil {
		return nil, err
	}
	q.restored.PlanReplaced, q.restored.SettingsChanged = note.Replaced, note.Updated
	q.parts = q.plan.Partitions
	if st := q.plan.Settings; st != nil {
		if err := sink.UseFormat(q.snk, st.SinkOptions[sink.FormatVersionKey]); err != nil {
			return nil, err
		}
	}
	if q.op, err = operator.New(s, operator.Config{Partitions: q.parts}); err != nil {
		return nil, err
	}
	if q.op.Stateful() {
		md, err := checkpoint.OperatorMetadata{Version: 1, OperatorID: 0, OperatorName: q.op.Name(),
			Stores: []checkpoint.StoreMetadata{{Name: checkpoint.DefaultStore, NumPartitions: q.parts}}}.Encode()
		if err != nil {
			return nil, err
		}
		key := checkpoint.OperatorMetadataKey("0")
		if err := q.writeOperatorMetadata(ctx, key, md); err != nil {
			return nil, fmt.Errorf("write %s: %w", key, err)
		}
	}
	q.st = state.New(q.cp, 0, state.Policy{Every: s.State.SnapshotEvery, Ratio: s.State.SnapshotRatio})
	q.tips = make([]state.Tip, q.parts)
	if err := q.recover(ctx); err != nil {
		return nil, err
	}
	q.restored.PartitionsSpec, q.restored.Partitions, q.restored.QueryID = s.Partitions, q.parts, id
	return q, nil
}

// writeOperatorMetadata writes the operator metadata md at key,
// create-only; one left by the plan a replaced plan had is replaced too,
// compare-and-swap.
func (q *Query) writeOperatorMetadata(ctx context.Context, key string, md []byte) error {
	_, err := q.cp.Put(ctx, key, md, gateway.IfAbsent())
	if !errors.Is(err, gateway.ErrExists) || q.restored.PlanReplaced == "" {
		if errors.Is(err, gateway.ErrExists) {
			return nil
		}
		return err
	}
	old, v, err := gateway.GetBounded(ctx, q.cp, key, 0)
	if err != nil || bytes.Equal(old, md) {
		return err
	}
	_, err = q.cp.Put(ctx, key, md, gateway.IfMatch(v))
	return err
}

// ownerLocation is the checkpoint's location as a file sink's owner
// record names it: canonical when it can be resolved, always redacted.
func ownerLocation(raw string) string {
	if raw == "" {
		return "(unnamed)"
	}
	if loc, err := gateway.CanonicalRoot(raw); err == nil {
		return gateway.Redact(loc)
	}
	return gateway.Redact(raw)
}

// readQueryID returns the id in metadata, or a new one.
func readQueryID(ctx context.Context, st gateway.Store) (string, bool, error) {
	id, err := checkpoint.ReadQueryID(ctx, st)
	if err != nil {
		return "", false, err
	}
	if id != "" {
		return id, false, nil
	}
	// a first run that took the writer record and stopped before writing
	// metadata: the checkpoint is that query's
	rec, _, rerr := gateway.GetBounded(ctx, st, gateway.WriterKey, 0)
	if rerr == nil {
		if w, perr := gateway.ParseWriterRecord(rec); perr == nil && w.QueryID != "" {
			return w.QueryID, true, nil
		}
	}
	return NewUUID(), true, nil
}

// resolve makes a relative path absolute against BaseDir.
func (q *Query) resolve(raw string) (string, error) {
	if strings.Contains(raw, "://") || filepath.IsAbs(raw) {
		return raw, nil
	}
	base := q.opts.BaseDir
	if base == "" {
		return filepath.Abs(raw)
	}
	return filepath.Join(base, raw), nil
}

// open opens a sink location and creates it when the backend can (a local
// directory). A source location is opened by openInput, which never
// creates it.
func (q *Query) open(ctx context.Context, raw string) (gateway.Store, string, error) {
	st, u, err := q.openStore(ctx, raw)
	if err != nil {
		return nil, "", err
	}
	if strings.HasPrefix(u, "file:") {
		if err := gateway.MakeBucket(ctx, st); err != nil {
			gateway.Close(st)
			return nil, "", err
		}
	}
	return st, u, nil
}

// openStore opens a source or sink location (a store URL or a path,
// resolved against BaseDir) and returns it with its URL.
func (q *Query) openStore(ctx context.Context, raw string) (gateway.Store, string, error) {
	if q.opts.Registry == nil {
		return nil, "", errors.New("engine: no store registry to open " + raw)
	}
	p, err := q.resolve(raw)
	if err != nil {
		return nil, "", err
	}
	u, err := gateway.ParseURL(p)
	if err != nil {
		return nil, "", err
	}
	st, err := q.opts.Registry.Open(ctx, u.String())
	if err != nil {
		return nil, "", err
	}
	q.opened = append(q.opened, st)
	return st, u.String(), nil
}

// openFenced is open with writes refused once the session is fenced.
func (q *Query) openFenced(ctx context.Context, raw string) (gateway.Store, string, error) {
	st, u, err := q.open(ctx, raw)
	if err != nil {
		return nil, "", err
	}
	return q.fenced(st), u, nil
}

// fenced is st with writes refused until the session is open and once it
// is fenced (the sink opens before the session and writes only after).
func (q *Query) fenced(st gateway.Store) gateway.Store {
	return gateway.Intercept(st, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
		if c.Op.Mutates() {
			if q.sess == nil {
				return errors.New("engine: a sink write before the writer session is open")
			}
			if err := q.sess.Err(); err != nil {
				return err
			}
		}
		return next(ctx)
	})
}

// Close stops the query and releases the checkpoint. Closing again does
// nothing.
func (q *Query) Close(ctx context.Context) error {
	if q.closed {
		return nil
	}
	q.closed = true
	var errs []error
	if q.src != nil {
		errs = append(errs, q.src.Close())
	}
	if q.snk != nil {
		errs = append(errs, q.snk.Close())
	}
	if q.sess != nil {
		errs = append(errs, q.sess.Close(ctx))
	}
	return errors.Join(errs...)
}

// latestID lists dir and returns the largest batch id present (names of
// digits only), -1 when none. A name beyond checkpoint.MaxBatchID is an
// error naming it: no batch can follow it.
func latestID(ctx context.Context, st gateway.Store, dir string) (int64, error) {
	latest := int64(-1)
	for a, err := range st.List(ctx, dir+"/") {
		if errors.Is(err, gateway.ErrNotFound) {
			return -1, nil // a local root not made yet: a new checkpoint
		}
		if err != nil {
			return 0, fmt.Errorf("list %s: %w", dir, err)
		}
		name := strings.TrimPrefix(a.Key, dir+"/")
		if strings.Contains(name, "/") {
			continue
		}
		n, err := checkpoint.ParseBatchID(name)
		if errors.Is(err, checkpoint.ErrBatchRange) {
			return 0, &CorruptError{Key: a.Key, What: "is named by a " + err.Error(), Next: checkpoint.NextRestore, Err: err}
		}
		if err != nil {
			continue
		}
		latest = max(latest, n)
	}
	return latest, nil
}

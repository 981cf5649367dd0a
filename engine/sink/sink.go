// Package sink holds the engine's sinks. A sink commits the output of
// batch N exactly once whatever happens: the engine may hand it the same
// batch again after a crash (with the same rows, in the same order), and
// the sink must recognise it.
//
//   - files: data files named by batch, then a create-only manifest
//     <path>/_spark_metadata/N (Spark's file sink log); a batch whose
//     manifest exists is skipped. Readers that follow the manifest see each
//     batch exactly once, even after a crash between data and manifest.
//     The sink has one owner, recorded create-only in its owner log
//     <path>/_ckgate/sink-owner/N (checkpoint.SinkOwner): another query is
//     refused (gateway.ErrInUse) unless Env.Adopt hands the sink over, and
//     then its batches go after the sink's latest manifest (owner.go).
//   - delta: parquet data files, then the table's next version
//     _delta_log/<N>.json created only if absent, with txn (query id,
//     batch id): a batch the table's txn holds is skipped (delta.go).
//   - http: POSTs the rows with an idempotency key per record and keeps a
//     ledger of completed effects in the checkpoint (_ckgate/effects/).
//   - console: prints the rows (not idempotent: for trying things out).
//   - noop: drops the rows (benchmarks).
package sink

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// Sink receives the output of each batch.
type Sink interface {
	// Commit writes the rows of batch; a batch committed before is skipped
	// (Result.Skipped).
	Commit(ctx context.Context, batch int64, rows []row.Row) (Result, error)
	// Identity describes the sink for the plan file.
	Identity() map[string]string
	Close() error
}

// Result says what a commit did.
type Result struct {
	Skipped bool  // the batch was committed before
	Rows    int64 // rows written now
	Bytes   int64
	Files   []string // data files written now
}

// Env is what a sink needs from the engine.
type Env struct {
	QueryID string
	// CheckpointURL is the checkpoint's canonical location (redacted),
	// recorded as a file sink's owner.
	CheckpointURL string
	// Adopt decides a file sink take-over (nil: every one is refused).
	Adopt Adopter
	// Checkpoint is the session's (fenced) view of the checkpoint, for
	// ledgers under _ckgate/.
	Checkpoint gateway.Store
	// Open opens a store by URL or path (relative paths already resolved),
	// returning it with its canonical URL; the engine wraps it so that it
	// refuses writes once the session is fenced.
	Open func(ctx context.Context, raw string) (gateway.Store, string, error)
	// Console is where the console sink writes.
	Console io.Writer
	Now     func() time.Time
}

// New opens the sink of s.
func New(ctx context.Context, s *spec.Spec, env Env) (Sink, error) {
	if env.Now == nil {
		env.Now = time.Now
	}
	switch s.Sink.Kind {
	case spec.SinkFiles:
		return newFiles(ctx, s, env)
	case spec.SinkDelta:
		return newDelta(ctx, s, env)
	case spec.SinkConsole:
		w := env.Console
		if w == nil {
			w = io.Discard
		}
		return &console{w: w}, nil
	case spec.SinkNoop:
		return noop{}, nil
	case spec.SinkHTTP:
		return newHTTP(ctx, s, env)
	}
	return nil, fmt.Errorf("sink.kind %q: unknown", s.Sink.Kind)
}

type noop struct{}

func (noop) Commit(_ context.Context, _ int64, rows []row.Row) (Result, error) {
	return Result{Rows: int64(len(rows))}, nil
}
func (noop) Identity() map[string]string { return map[string]string{"kind": spec.SinkNoop} }
func (noop) Close() error                { return nil }

type console struct{ w io.Writer }

func (c *console) Commit(_ context.Context, batch int64, rows []row.Row) (Result, error) {
	b := fmt.Appendf(nil, "-------------------------------------------\nBatch: %d\n-------------------------------------------\n", batch)
	for i := range rows {
		b = row.AppendJSON(b, &rows[i])
		b = append(b, '\n')
	}
	n, err := c.w.Write(b)
	return Result{Rows: int64(len(rows)), Bytes: int64(n)}, err
}
func (c *console) Identity() map[string]string { return map[string]string{"kind": spec.SinkConsole} }
func (c *console) Close() error                { return nil }

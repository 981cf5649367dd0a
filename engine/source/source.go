// Package source holds the engine's sources: files (new files of a
// directory in name order), rate (generated rows), kafka and delta (a
// Delta table's versions in order, delta.go). A source
// plans the end offset of the next batch and reads the rows between two
// offsets, again and again if asked: a re-run batch reads exactly what the
// first attempt read.
//
// Offsets are the JSON text Spark writes on a source's line of offsets/N
// ({"logOffset":3}, {"topic":{"0":42}}, ...); "" means "no offset yet".
package source

import (
	"context"
	"fmt"
	"time"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// Source produces the rows of a query.
type Source interface {
	// Identity says which input this is (recorded in _ckgate/plan.json: a
	// restart on a different input is refused).
	Identity() map[string]string
	// Next returns the end offset of the next batch that starts at start;
	// end == start means no new data.
	Next(ctx context.Context, start string) (end string, err error)
	// Read emits the rows after start up to and including end, in a
	// deterministic order. The row passed to emit is only valid during the
	// call.
	Read(ctx context.Context, start, end string, emit func(*row.Row) error) error
	// Close releases the source.
	Close() error
}

// Env is what a source needs from the engine.
type Env struct {
	// Checkpoint is the session's (fenced) view of the checkpoint.
	Checkpoint gateway.Store
	// CreateEntry writes a create-only log entry through the session.
	CreateEntry func(ctx context.Context, key string, data []byte) (gateway.Entry, error)
	// Dir is the source's metadata directory: sources/<index>.
	Dir string
	// Open opens the store named by a URL or path (relative paths are
	// already resolved) and returns it with its canonical URL.
	Open func(ctx context.Context, raw string) (gateway.Store, string, error)
	// Now is the clock.
	Now func() time.Time
}

// New opens the source of s.
func New(ctx context.Context, s *spec.Spec, env Env) (Source, error) {
	if env.Now == nil {
		env.Now = time.Now
	}
	switch s.Source.Kind {
	case spec.SourceFiles:
		return newFiles(ctx, s, env)
	case spec.SourceRate:
		return newRate(ctx, s, env)
	case spec.SourceKafka:
		return newKafka(ctx, s, env)
	case spec.SourceDelta:
		return newDelta(ctx, s, env)
	}
	return nil, fmt.Errorf("source.kind %q: unknown", s.Source.Kind)
}

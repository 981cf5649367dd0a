package engine

import (
	"context"
	"fmt"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

// Position is where a checkpoint's logs stand: what a restart will do.
type Position struct {
	LatestOffsets int64 // the latest offsets/N, -1 for none
	LatestCommit  int64 // the latest commits/N, -1 for none
}

// InFlight reports whether batch LatestOffsets is logged but not
// committed: a restart re-runs it with the same offsets.
func (p Position) InFlight() bool { return p.LatestOffsets >= 0 && p.LatestCommit < p.LatestOffsets }

// Restart says what a restart does from p.
func (p Position) Restart() string {
	switch {
	case p.InFlight():
		return fmt.Sprintf("a restart re-runs batch %d with the same offsets", p.LatestOffsets)
	case p.LatestCommit >= 0:
		return fmt.Sprintf("a restart plans batch %d after the committed batch %d", p.LatestCommit+1, p.LatestCommit)
	}
	return "no batch is logged: a restart starts with batch 0"
}

// Position reads where the checkpoint's logs stand now (after a failed
// batch, say: its offsets may be logged).
func (q *Query) Position(ctx context.Context) (Position, error) {
	L, err := latestID(ctx, q.opts.Checkpoint, checkpoint.OffsetsDir)
	if err != nil {
		return Position{}, err
	}
	C, err := latestID(ctx, q.opts.Checkpoint, checkpoint.CommitsDir)
	if err != nil {
		return Position{}, err
	}
	return Position{LatestOffsets: L, LatestCommit: C}, nil
}

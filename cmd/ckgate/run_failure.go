package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/ckgate/ckgate/engine"
)

// runState is what the checkpoint shows after a run that failed: the
// summary of a failed run says it, never "nothing was written".
type runState struct {
	LatestOffsets int64  `json:"latestOffsetsBatch"` // -1 for none
	LatestCommit  int64  `json:"latestCommitBatch"`  // -1 for none
	InFlight      *int64 `json:"inFlightBatch,omitempty"`
	Restart       string `json:"restart"`
	Error         string `json:"error,omitempty"` // why the checkpoint could not be read
}

// stateAfter reads what the checkpoint of q shows now (even after a
// signal cancelled ctx).
func stateAfter(ctx context.Context, q *engine.Query) *runState {
	pos, err := q.Position(context.WithoutCancel(ctx))
	if err != nil {
		return &runState{LatestOffsets: -1, LatestCommit: -1, Restart: "unknown: `ckgate inspect` shows the checkpoint", Error: err.Error()}
	}
	st := &runState{LatestOffsets: pos.LatestOffsets, LatestCommit: pos.LatestCommit, Restart: pos.Restart()}
	if pos.InFlight() {
		st.InFlight = &pos.LatestOffsets
	}
	return st
}

// failure prints, after the batches a failed run completed, that it failed
// and what the checkpoint now shows.
func (p *runPrinter) failure(st *runState, err error) {
	what := "run failed"
	if errors.Is(err, context.Canceled) {
		what = "run interrupted"
	}
	fmt.Fprintf(p.w, "%s: %v\n", what, err)
	switch {
	case st.Error != "":
		fmt.Fprintf(p.w, "checkpoint now: could not be read (%s); %s\n", st.Error, st.Restart)
	case st.InFlight != nil:
		fmt.Fprintf(p.w, "checkpoint now: batch %d is in flight (offsets/%d logged, commits/%d not written); %s\n",
			*st.InFlight, *st.InFlight, *st.InFlight, st.Restart)
	case st.LatestCommit >= 0:
		fmt.Fprintf(p.w, "checkpoint now: batch %d is the last committed; %s\n", st.LatestCommit, st.Restart)
	default:
		fmt.Fprintf(p.w, "checkpoint now: %s\n", st.Restart)
	}
}

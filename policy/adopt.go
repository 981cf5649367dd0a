package policy

import (
	"context"

	"github.com/ckgate/ckgate/gateway"
)

// AdoptSinkRequest asks whether Principal's query (QueryID, checkpoint
// Root) may take over the file sink at Sink, which another query or Spark
// wrote.
type AdoptSinkRequest struct {
	Principal Principal
	Root      string // the adopting query's checkpoint root
	QueryID   string
	Sink      string // the sink's location
	Facts     SinkFacts
}

// DecideAdoptSink decides req as action "adopt_sink" (location: the
// sink's canonical location, root: the adopting checkpoint's): a refusal
// is a *DeniedError naming the rules.
func DecideAdoptSink(ctx context.Context, e *Engine, req AdoptSinkRequest, log *DecisionLog) error {
	root, err := gateway.CanonicalRoot(req.Root)
	if err != nil {
		return err
	}
	loc, err := gateway.CanonicalRoot(req.Sink)
	if err != nil {
		return err
	}
	facts := req.Facts
	in := Input{
		Action:     "adopt_sink",
		Location:   loc,
		Path:       loc,
		Root:       root,
		Principal:  req.Principal,
		Checkpoint: Facts{QueryID: req.QueryID},
		Sink:       &facts,
	}
	_, err = Evaluate(ctx, e, in, log)
	return err
}

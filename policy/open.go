package policy

import (
	"context"
	"fmt"

	"github.com/ckgate/ckgate/gateway"
)

// OpenRequest is a request to open the checkpoint rooted at Root (its
// location) for query QueryID.
type OpenRequest struct {
	Principal    Principal
	Root         string
	QueryID      string
	KnownQueries []KnownQuery  // added to data.ckgate.queries
	Warn         func(Warning) // told an allowed open's warnings, if any
}

// CheckOpen decides whether req may open the checkpoint held by store (a
// store opened at the checkpoint root): it reads the query id in the
// root's `metadata` (absent: a new checkpoint) and asks the policy. A
// refusal (another query's metadata, a root equal to, inside or above a
// known query's root, no query id) is a *DeniedError; a metadata file that
// cannot be read or parsed is an error naming it.
func CheckOpen(ctx context.Context, e *Engine, store gateway.Store, req OpenRequest, log *DecisionLog) error {
	mdID, err := gateway.ReadMetadataID(ctx, store)
	if err != nil {
		return fmt.Errorf("open %s: %w", gateway.Redact(req.Root), err)
	}
	return DecideOpen(ctx, e, req, mdID, log)
}

// DecideOpen is CheckOpen for a caller that has read the root's metadata
// already: mdID is the query id it holds ("" when there is none).
//
// The root and the known queries' roots are decided as canonical
// locations (gateway.CanonicalRoot): a symlinked alias, a percent-encoded
// or a differently slashed spelling of a known root is that root.
func DecideOpen(ctx context.Context, e *Engine, req OpenRequest, mdID string, log *DecisionLog) error {
	root, err := gateway.CanonicalRoot(req.Root)
	if err != nil {
		return err
	}
	known := make([]KnownQuery, len(req.KnownQueries))
	for i, q := range req.KnownQueries {
		r, err := gateway.CanonicalRoot(q.Root)
		if err != nil {
			return fmt.Errorf("known query %s: %w", q.QueryID, err)
		}
		known[i] = KnownQuery{QueryID: q.QueryID, Root: r}
	}
	in := Input{
		Action:       "open",
		Root:         root,
		Principal:    req.Principal,
		Checkpoint:   Facts{QueryID: req.QueryID, MetadataQueryID: mdID},
		KnownQueries: known,
	}
	d, err := Evaluate(ctx, e, in, log)
	if err == nil && req.Warn != nil && len(d.Warn) > 0 {
		req.Warn(Warning{Action: in.Action, Path: root, Violations: d.Warn})
	}
	return err
}

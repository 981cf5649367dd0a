package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/policy"
)

// runGuard is the policy in front of every mutation `ckgate run` makes:
// the checkpoint's and the sink's, decided for the job principal.
type runGuard struct {
	eng       *policy.Engine
	log       *policy.DecisionLog
	principal policy.Principal
	queryID   string
	close     func() error
}

// guardRun builds the policy engine and the decision log from the flags,
// asks the policy whether the job may open the checkpoint held by cp
// (rooted at ckURL: another query's metadata, or a root equal to, inside or
// above a known query's root is refused), and returns cp with every Put and
// Delete decided by the policy.
func (e *env) guardRun(c *cli.Context, cp gateway.Store, ckURL string, s *spec.Spec) (gateway.Store, *runGuard, error) {
	eng, log, closeLog, err := e.policyAndLog(c)
	if err != nil {
		return nil, nil, err
	}
	g := &runGuard{eng: eng, log: log, close: closeLog,
		principal: policy.Principal{ID: principalID(c), Kind: policy.KindJob}}
	mdID, err := checkpointQueryID(c.Context, cp)
	if err != nil {
		closeLog()
		if errors.Is(err, gateway.ErrInvalidKey) {
			// a damaged metadata: the engine's check names it and the
			// safe next step (it reads the rest only in this case)
			if perr := engine.Preflight(c.Context, cp, s); perr != nil {
				return nil, nil, perr
			}
		}
		return nil, nil, err
	}
	g.queryID = mdID
	if g.queryID == "" {
		g.queryID = engine.NewUUID() // a new checkpoint: the engine names the query itself
	}
	root := location(ckURL)
	req := policy.OpenRequest{Principal: g.principal, Root: root, QueryID: g.queryID}
	if err := policy.DecideOpen(c.Context, eng, req, mdID, log); err != nil {
		closeLog()
		return nil, nil, err
	}
	return g.wrap(cp, root), g, nil
}

// wrap puts the policy in front of st, a store rooted at root.
func (g *runGuard) wrap(st gateway.Store, root string) gateway.Store {
	return gateway.WithAuthorizer(st, policy.NewAuthorizer(g.eng, g.principal, root, policy.Facts{QueryID: g.queryID}, g.log))
}

// registry is base with the policy in front of every store it opens (the
// query's sink; its source is only read).
func (g *runGuard) registry(base *gateway.Registry) *gateway.Registry {
	r := gateway.NewRegistry()
	for _, scheme := range base.Schemes() {
		r.Register(scheme, func(ctx context.Context, u *url.URL) (gateway.Store, error) {
			st, err := base.Open(ctx, u.String())
			if err != nil {
				return nil, err
			}
			return g.wrap(st, location(u.String())), nil
		})
	}
	return r
}

// checkpointQueryID is the query id in the checkpoint's metadata, "" for
// a new checkpoint.
func checkpointQueryID(ctx context.Context, cp gateway.Store) (string, error) {
	data, _, err := gateway.GetBounded(ctx, cp, "metadata", 0)
	switch {
	case errors.Is(err, gateway.ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read metadata: %w", err)
	}
	id, err := policy.ParseMetadata(data)
	if err != nil {
		return "", gateway.E("open", "metadata", gateway.ErrInvalidKey, err)
	}
	return id, nil
}

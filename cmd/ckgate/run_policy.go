package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/policy"
)

// runGuard is the policy in front of every mutation `ckgate run` makes:
// the checkpoint's and the sink's, decided for the job principal.
type runGuard struct {
	e         *env
	c         *cli.Context
	eng       *policy.Engine
	log       *policy.DecisionLog
	principal policy.Principal
	queryID   string
	closeLog  func() error

	mu      sync.Mutex
	closers []func()
}

// close closes the decision log and the stores the guards opened.
func (g *runGuard) close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, f := range g.closers {
		f()
	}
	g.closers = nil
	return g.closeLog()
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
	g := &runGuard{e: e, c: c, eng: eng, log: log, closeLog: closeLog,
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
	req := policy.OpenRequest{Principal: g.principal, Root: ckURL, QueryID: g.queryID, Warn: e.policyWarning}
	if err := policy.DecideOpen(c.Context, eng, req, mdID, log); err != nil {
		closeLog()
		return nil, nil, err
	}
	guarded, err := g.wrap(cp, ckURL, true)
	if err != nil {
		g.close()
		return nil, nil, err
	}
	return guarded, g, nil
}

// wrap puts the policy in front of st, a store opened at raw: the job's
// checkpoint (root) or its sink, written through the query's writer
// session.
func (g *runGuard) wrap(st gateway.Store, raw string, root bool) (gateway.Store, error) {
	guarded, done, err := g.e.guard(g.c.Context, g.c, st, policy.GuardConfig{Engine: g.eng, Log: g.log, Principal: g.principal,
		StoreURL: raw, CheckpointRoot: root, WriterSession: true, Facts: policy.Facts{QueryID: g.queryID}})
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.closers = append(g.closers, done)
	g.mu.Unlock()
	return guarded, nil
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
			return g.wrap(st, u.String(), false)
		})
	}
	return r
}

// checkpointQueryID is the query id in the checkpoint's metadata, "" for
// a new checkpoint.
func checkpointQueryID(ctx context.Context, cp gateway.Store) (string, error) {
	id, err := checkpoint.ReadQueryID(ctx, cp)
	if errors.Is(err, checkpoint.ErrCorrupt) || errors.Is(err, checkpoint.ErrUnsupportedVersion) {
		return "", gateway.E("open", checkpoint.MetadataKey, gateway.ErrInvalidKey, err)
	}
	if err != nil {
		return "", fmt.Errorf("read metadata: %w", err)
	}
	return id, nil
}

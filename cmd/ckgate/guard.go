package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/policy"
)

// guard puts the policy in front of s (opened at cfg.StoreURL): every
// mutating command goes through here, so none forgets a step. On a cloud
// store it opens the bucket or container too, to find the checkpoint roots
// above the store's root; the returned close function closes it.
func (e *env) guard(ctx context.Context, c *cli.Context, s gateway.Store, cfg policy.GuardConfig) (gateway.Store, func(), error) {
	done := func() {}
	if cfg.Warn == nil {
		cfg.Warn = e.policyWarning
	}
	curl, err := gateway.ContainerURL(cfg.StoreURL)
	if err != nil {
		return nil, nil, &InputError{Err: err}
	}
	if curl != "" && cfg.Container == nil && cfg.Roots == nil {
		top, err := e.openStore(ctx, c, curl)
		if err != nil {
			return nil, nil, err
		}
		cfg.Container = top
		done = func() { gateway.Close(top) }
	}
	g, _, err := policy.Guard(s, cfg)
	if err != nil {
		done()
		return nil, nil, &InputError{Err: err}
	}
	return g, done, nil
}

// guardCopy guards a whole-checkpoint copy: the source written (its
// migration marker only) by p, a housekeeping principal, and the
// destination by an archive principal, which only creates, create-only,
// inside it. done closes what the guards opened.
func (e *env) guardCopy(c *cli.Context, p policy.Principal, eng *policy.Engine, log *policy.DecisionLog,
	src gateway.Store, srcURL string, dst gateway.Store, dstURL string) (gsrc, gdst gateway.Store, done func(), err error) {
	gsrc, done1, err := e.guard(c.Context, c, src, policy.GuardConfig{Engine: eng, Log: log, Principal: p, StoreURL: srcURL})
	if err != nil {
		return nil, nil, nil, err
	}
	gdst, done2, err := e.guardArchive(c, eng, log, dst, dstURL)
	if err != nil {
		done1()
		return nil, nil, nil, err
	}
	return gsrc, gdst, func() { done1(); done2() }, nil
}

// guardArchive guards dst (at dstURL) for the archive copier.
func (e *env) guardArchive(c *cli.Context, eng *policy.Engine, log *policy.DecisionLog, dst gateway.Store, dstURL string) (gateway.Store, func(), error) {
	return e.guard(c.Context, c, dst, policy.GuardConfig{Engine: eng, Log: log,
		Principal: policy.Principal{ID: principalID(c), Kind: policy.KindArchive}, StoreURL: dstURL})
}

package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/policy"
)

// storePolicyFlags are the flags of the store commands that mutate: who
// asks, and the policy that decides.
func storePolicyFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "principal", Usage: "principal `ID` given to the policy and the decision log (default: the OS user)"},
		&cli.StringFlag{Name: "kind", Value: policy.KindAdmin, Usage: "principal `KIND`: admin, housekeeping, retention or job"},
		&cli.StringFlag{Name: "reason", Usage: "an admin's stated `REASON` to break glass (recorded in the decision log)"},
		decisionLogFlag(),
	}, policyFlags()...)
}

const storePolicyHelp = "\n\nThe write is decided by the OPA policies (the defaults plus --policy and --data) for the\n" +
	"principal --principal of kind --kind (default admin). Under a checkpoint root (a directory\n" +
	"holding a `metadata` entry, or offsets/ or commits/ holding log entries; every root above the\n" +
	"key counts, and symbolic links are resolved first) only the job and retention may delete, log\n" +
	"entries (offsets/N, commits/N, sources/S/N, metadata, _spark_metadata/N) are never replaced and\n" +
	"are created only by the owning query's writer session, and no metadata file is created inside a\n" +
	"checkpoint. An unconditional put is written with what the decision saw (create-only when the key\n" +
	"was absent), so a concurrent writer's entry is never replaced (exit 3). An admin breaks glass\n" +
	"with --reason, which needs --decision-log to record it. A refusal exits 4 and names the rule."

// guardStore returns s with its Put and Delete decided by the policy, for
// a write under raw (the store URL). The close function is never nil.
func (e *env) guardStore(c *cli.Context, s gateway.Store, raw string) (gateway.Store, func() error, error) {
	kind := c.String("kind")
	if !slices.Contains([]string{policy.KindAdmin, policy.KindHousekeeping, policy.KindRetention, policy.KindJob}, kind) {
		return nil, nil, usageErrorf(c, "--kind %q: want admin, housekeeping, retention or job", kind)
	}
	eng, log, closeLog, err := e.policyAndLog(c)
	if err != nil {
		return nil, nil, err
	}
	p := policy.Principal{ID: principalID(c), Kind: kind, Reason: strings.TrimSpace(c.String("reason"))}
	g, done, err := e.guard(c.Context, c, s, policy.GuardConfig{Engine: eng, Log: log, Principal: p, StoreURL: raw})
	if err != nil {
		closeLog()
		return nil, nil, err
	}
	return g, func() error { done(); return closeLog() }, nil
}

// refusalHint names the way out of a policy refusal of a store write: an
// admin breaking glass, which needs both a reason and a decision log.
func refusalHint(c *cli.Context, err error) error {
	if !errors.Is(err, gateway.ErrDenied) || strings.TrimSpace(c.String("reason")) != "" {
		return err
	}
	return fmt.Errorf("%w (only an admin breaks glass: --kind admin --reason TEXT --decision-log FILE, which records the override)", err)
}

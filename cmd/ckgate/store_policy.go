package main

import (
	"context"
	"errors"
	"fmt"
	"path"
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
	"holding `metadata`) only the job and retention may delete, and log entries (offsets/N,\n" +
	"commits/N, _spark_metadata/N) are never replaced; an admin breaks glass with --reason, which\n" +
	"needs --decision-log to record it. A refusal exits 4 and names the rule."

// guardStore returns s with its Put and Delete decided by the policy, for
// a write of key under raw (the store URL).
func (e *env) guardStore(c *cli.Context, s gateway.Store, raw, key string) (gateway.Store, func() error, error) {
	kind := c.String("kind")
	if !slices.Contains([]string{policy.KindAdmin, policy.KindHousekeeping, policy.KindRetention, policy.KindJob}, kind) {
		return nil, nil, usageErrorf(c, "--kind %q: want admin, housekeeping, retention or job", kind)
	}
	eng, log, closeLog, err := e.policyAndLog(c)
	if err != nil {
		return nil, nil, err
	}
	p := policy.Principal{ID: principalID(c), Kind: kind, Reason: strings.TrimSpace(c.String("reason"))}
	base := location(raw)
	dir, found, facts, err := checkpointRootOf(c.Context, s, key)
	if err != nil {
		closeLog()
		return nil, nil, err
	}
	root := "" // no checkpoint holds key
	switch {
	case found && dir == "":
		root = base
	case found:
		root = base + "/" + dir
	}
	a := policy.NewAuthorizer(eng, p, root, facts, log, policy.WithStoreURL(base), policy.WithExists(s))
	return gateway.WithAuthorizer(s, a), closeLog, nil
}

// checkpointRootOf finds the checkpoint root that holds key: the nearest
// directory above it with a `metadata` file, relative to the store root
// ("" is the store root itself); found is false when there is none.
func checkpointRootOf(ctx context.Context, s gateway.Store, key string) (dir string, found bool, facts policy.Facts, err error) {
	dir = path.Dir(strings.TrimSuffix(key, "/"))
	for {
		if dir == "." || dir == "/" {
			dir = ""
		}
		mdKey := path.Join(dir, "metadata")
		data, _, err := gateway.GetBounded(ctx, s, mdKey, 0)
		switch {
		case err == nil:
			id, perr := policy.ParseMetadata(data)
			if perr != nil {
				id = "" // a damaged metadata still marks a checkpoint root
			}
			return dir, true, policy.Facts{QueryID: id, MetadataQueryID: id}, nil
		case errors.Is(err, gateway.ErrNotFound), errors.Is(err, gateway.ErrInvalidKey):
		default:
			return "", false, policy.Facts{}, fmt.Errorf("look for the checkpoint root of %s: %w", key, err)
		}
		if dir == "" {
			return "", false, policy.Facts{}, nil
		}
		dir = path.Dir(dir)
	}
}

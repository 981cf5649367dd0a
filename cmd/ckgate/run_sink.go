package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/sink"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/lifecycle"
	"github.com/ckgate/ckgate/policy"
)

// adoptSinkFlag is run's --adopt-sink.
func adoptSinkFlag() cli.Flag {
	return &cli.BoolFlag{Name: "adopt-sink", Usage: "take over a file sink that another query or Spark wrote (decided by the policy, " +
		"action adopt_sink): this query's batches go after the sink's latest manifest"}
}

// sinkAdopter decides a file sink take-over for `ckgate run`: the new root
// of a fresh start of the sink's owner takes it over, and so does any
// query run with --adopt-sink; both only if the policy allows the job
// principal (action adopt_sink). Anything else is declined: the sink
// refuses, naming the owner (exit 3).
func (g *runGuard) sinkAdopter(cp gateway.Store, ckURL string) sink.Adopter {
	explicit := g.c.Bool("adopt-sink")
	return func(ctx context.Context, cl sink.Claim) (string, error) {
		handover, reason := "", ""
		if cl.Owner != nil {
			rec, err := migratedFrom(ctx, cp)
			if err != nil {
				return "", err
			}
			if rec != nil && rec.OldQueryID == cl.Owner.QueryID {
				handover = "fresh-start"
				reason = fmt.Sprintf("fresh start of query %s (%s), archived to %s: %s", rec.OldQueryID, rec.OldRoot, rec.ArchivedTo, rec.Reason)
			}
		}
		if handover == "" && explicit {
			handover, reason = "adopt-sink", fmt.Sprintf("ckgate run --adopt-sink by %s", g.principal.ID)
		}
		if handover == "" {
			return "", nil
		}
		facts := policy.SinkFacts{LatestBatch: cl.Latest, Handover: handover}
		if cl.Owner != nil {
			facts.Owner = policy.SinkOwnerFacts{QueryID: cl.Owner.QueryID, Checkpoint: cl.Owner.Checkpoint}
		}
		req := policy.AdoptSinkRequest{Principal: g.principal, Root: ckURL, QueryID: cl.QueryID, Sink: cl.Location, Facts: facts}
		if err := policy.DecideAdoptSink(ctx, g.eng, req, g.log); err != nil {
			return "", err
		}
		return reason, nil
	}
}

// migratedFrom is the checkpoint's fresh-start record (nil when it was not
// started fresh from another root).
func migratedFrom(ctx context.Context, cp gateway.Store) (*lifecycle.MigrationRecord, error) {
	data, _, err := gateway.GetBounded(ctx, cp, lifecycle.MigratedFromKey, 0)
	if errors.Is(err, gateway.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", lifecycle.MigratedFromKey, err)
	}
	var rec lifecycle.MigrationRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, gateway.E("read", lifecycle.MigratedFromKey, gateway.ErrInvalidKey, fmt.Errorf("not a fresh-start record: %w", err))
	}
	return &rec, nil
}

// sinkOwnerOf reads, for audit, the owner of the file sink a checkpoint's
// plan names.
func (e *env) sinkOwnerOf(c *cli.Context) func(ctx context.Context, url string) (string, string, error) {
	return func(ctx context.Context, url string) (string, string, error) {
		st, err := e.openStore(ctx, c, url)
		if err != nil {
			return "", "", err
		}
		defer gateway.Close(st)
		o, _, err := checkpoint.ReadSinkOwner(ctx, st)
		if err != nil || o == nil {
			return "", "", err
		}
		return o.QueryID, o.Checkpoint, nil
	}
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/output"
	"github.com/ckgate/ckgate/lifecycle"
	"github.com/ckgate/ckgate/policy"
)

// writePlanFile writes the reviewed plan to the new local file out
// (create-only: a plan under review is never replaced by another).
func (e *env) writePlanFile(c *cli.Context, out string, p lifecycle.RetentionPolicy, cp lifecycle.PlanTarget, sinkURLs []string, plans []sinkPlan) error {
	var sinks []lifecycle.PlanTarget
	for i, sp := range plans {
		sinks = append(sinks, lifecycle.NewPlanTarget(sinkURLs[i], location(sinkURLs[i]), "", sp.listing, sp.RetentionResult))
	}
	var data bytes.Buffer
	if err := output.JSON(&data, lifecycle.NewPlanFile(p, cp, sinks)); err != nil {
		return err
	}
	if err := writeNewFile(out, data.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "plan %s written to %s: review it, then: ckgate retention apply --plan %s\n", cp.Result().ID(), out, out)
	return nil
}

// writeNewFile writes data to the new file path, whole or not at all: a
// temporary file in the same directory, synced, then linked to path
// (link(2) never replaces). An existing path is gateway.ErrExists.
func writeNewFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return &InputError{Err: fmt.Errorf("--out %s: %w", path, err)}
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, os.ErrExist) {
		return fmt.Errorf("--out %s exists: a plan file is never replaced; choose another name or remove it: %w", path, gateway.ErrExists)
	} else if err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	return nil
}

// planFileURL is the URL to open for the planned root t: given, when it
// names the same location, or else the one the plan recorded.
func planFileURL(c *cli.Context, given string, t lifecycle.PlanTarget, what string) (string, error) {
	raw := given
	if raw == "" {
		if t.URLRedacted {
			return "", usageErrorf(c, "the plan records %s %s with its secrets hidden: give it again", what, t.URL)
		}
		raw = t.URL
	}
	if loc := location(raw); loc != t.Location {
		return "", usageErrorf(c, "%s %s is %s; the plan is for %s", what, gateway.Redact(raw), loc, t.Location)
	}
	return raw, nil
}

// retentionApplyPlan is `retention apply --plan FILE [URL]`.
func (e *env) retentionApplyPlan(c *cli.Context) error {
	a, err := args(c, 0, 1)
	if err != nil {
		return err
	}
	for _, f := range []string{"min-batches", "retain-for", "log-retention"} {
		if c.IsSet(f) {
			return usageErrorf(c, "--%s with --plan: the plan file fixes the policy it was made with", f)
		}
	}
	if err := checkConcurrency(c); err != nil {
		return err
	}
	name := c.String("plan")
	data, err := gateway.ReadRegularFile(name, lifecycle.MaxPlanFileBytes)
	if err != nil {
		return &InputError{Err: fmt.Errorf("--plan: %w", err)}
	}
	pf, err := lifecycle.ParsePlanFile(name, data)
	if err != nil {
		return &InputError{Err: err}
	}
	given := ""
	if len(a) == 1 {
		given = a[0]
	}
	ckURL, err := planFileURL(c, given, pf.Checkpoint, "checkpoint")
	if err != nil {
		return err
	}
	// --sink, when given, must name the plan's sinks; otherwise they are
	// the plan's.
	flags := c.StringSlice("sink")
	if len(flags) > 0 && len(flags) != len(pf.Sinks) {
		return usageErrorf(c, "--sink given %d times; the plan holds %d sinks", len(flags), len(pf.Sinks))
	}
	sinks := make([]string, len(pf.Sinks))
	for i, t := range pf.Sinks {
		g := ""
		for _, f := range flags {
			if location(f) == t.Location {
				g = f
			}
		}
		if len(flags) > 0 && g == "" {
			return usageErrorf(c, "the plan's sink %s is not among --sink", t.URL)
		}
		if sinks[i], err = planFileURL(c, g, t, "sink"); err != nil {
			return err
		}
	}
	p := pf.Policy.Policy(time.Now())
	eng, log, closeLog, err := e.policyAndLog(c)
	if err != nil {
		return err
	}
	defer closeLog()
	return e.withStore(c, ckURL, func(st gateway.Store) error {
		// Check every root against the plan before deleting anything.
		l, now, err := e.retentionPlanFor(c, st, ckURL, p)
		if err != nil {
			return err
		}
		q := queryIDOf(c, st)
		if err := pf.Checkpoint.Check(l, now, q); err != nil {
			return err
		}
		return e.withSinks(c, sinks, p, func(plans []sinkPlan, sinkStores []gateway.Store) error {
			for i, sp := range plans {
				if err := pf.Sinks[i].Check(sp.listing, sp.RetentionResult, ""); err != nil {
					return err
				}
			}
			facts := policy.Facts{LatestBatch: now.LatestOffsets, RetainFrom: now.RetainFrom, QueryID: q}
			if err := e.applyPlan(c, st, ckURL, pf.Checkpoint.Result(), facts, eng, log, "", "keys"); err != nil {
				return err
			}
			for i, t := range pf.Sinks {
				if err := e.applyPlan(c, sinkStores[i], sinks[i], t.Result(), policy.Facts{}, eng, log, "sink "+plans[i].URL+": ", "manifests"); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

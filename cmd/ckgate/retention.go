package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/output"
	"github.com/ckgate/ckgate/lifecycle"
	"github.com/ckgate/ckgate/policy"
)

// retentionCommand is `ckgate retention plan|apply URL`.
func (e *env) retentionCommand() *cli.Command {
	return &cli.Command{
		Name:  "retention",
		Usage: "plan and apply the cleanup of what a checkpoint can never need again",
		Description: "plan lists every key of the checkpoint at URL with a decision (keep or remove) and a\n" +
			"reason, following Spark's own rules: the latest --min-batches batches of offsets/ and commits/\n" +
			"(and every batch younger than --retain-for), never the latest committed or an in-flight batch;\n" +
			"the state files that rebuild every retained version; compacted logs from their latest\n" +
			"compaction; _ckgate/ ledgers younger than --log-retention. apply executes the plan through\n" +
			"the gateway as a principal of kind retention, so the policy refuses any key not planned.\n\n" +
			"--sink URL (repeatable) also plans the manifest log (URL/_spark_metadata/) of a file sink's\n" +
			"output directory by the same --min-batches and --retain-for: its latest compaction and every\n" +
			"manifest after it (and the newest compaction at or below the oldest retained manifest) are\n" +
			"kept, older manifests go; the sink's data files are never removed. apply deletes them through\n" +
			"the same policy check, with a plan of their own per sink, after the checkpoint's.\n\n" +
			"plan --out FILE writes the plan (every removal with its size, version and reason, the policy\n" +
			"and the batches it saw) to a new local file for review; apply --plan FILE deletes exactly those\n" +
			"keys, nothing the checkpoint gained since. It re-reads the checkpoint first and refuses (exit 3,\n" +
			"naming each change) when the query id differs, the log went back, a planned key changed size or\n" +
			"version, or the checkpoint now needs a planned key.\n\n" +
			"Exit status: 0 done; 1 a failure (store, a delete part-way: running apply again finishes it);\n" +
			"2 a usage error, not a checkpoint, not a file sink output or not a plan file; 3 --out FILE\n" +
			"exists, or the checkpoint changed since the plan --plan FILE; 4 a delete denied by policy.",
		Subcommands: []*cli.Command{
			{
				Name:      "plan",
				Usage:     "print what retention would keep and remove, with reasons",
				ArgsUsage: "[--sink OUTPUT_URL]... URL",
				Flags: append(retentionFlags(), formatFlag(),
					&cli.BoolFlag{Name: "all", Usage: "table: list kept keys too"},
					&cli.StringFlag{Name: "out", Usage: "also write the plan to the new local `FILE`, for review and retention apply --plan FILE"}),
				Action: e.retentionPlan,
			},
			{
				Name:      "apply",
				Usage:     "delete what the plan removes, through the policy authorizer",
				ArgsUsage: "[--sink OUTPUT_URL]... URL | --plan FILE [URL]",
				Flags: append(append(retentionFlags(), policyFlags()...), decisionLogFlag(),
					&cli.StringFlag{Name: "plan", Usage: "delete exactly what the reviewed plan `FILE` (retention plan --out) removes; refused (exit 3) if the checkpoint changed in a way that makes it unsafe"},
					&cli.StringFlag{Name: "principal", Value: "ckgate-retention", Usage: "principal `ID` (kind retention)"},
					concurrencyFlag(lifecycle.DefaultApplyConcurrency, "at most `N` deletes at once"),
					progressFlag()),
				Action: e.retentionApply,
			},
		},
	}
}

func retentionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "min-batches", Value: lifecycle.DefaultMinBatches, Usage: "keep at least the latest `N` batches"},
		durationFlag("retain-for", 0, "also keep every batch younger than `DURATION` (e.g. 72h, 3d)"),
		durationFlag("log-retention", lifecycle.DefaultLogRetention, "keep _ckgate/ ledgers younger than `DURATION` (e.g. 7d)"),
		&cli.StringSliceFlag{Name: "sink", Usage: "also plan the manifest log (_spark_metadata/) of the file sink output `URL` (repeatable; data files are never removed)"},
	}
}

// retentionPolicy is the planner's policy from the flags.
func retentionPolicy(c *cli.Context) (lifecycle.RetentionPolicy, error) {
	if n := c.Int("min-batches"); n < 1 {
		return lifecycle.RetentionPolicy{}, usageErrorf(c, "--min-batches %d: want 1 or more", n)
	}
	if flagDuration(c, "retain-for") < 0 || flagDuration(c, "log-retention") <= 0 {
		return lifecycle.RetentionPolicy{}, usageErrorf(c, "--retain-for and --log-retention: want a positive duration")
	}
	return lifecycle.RetentionPolicy{
		MinBatches:   c.Int("min-batches"),
		RetainFor:    flagDuration(c, "retain-for"),
		LogRetention: flagDuration(c, "log-retention"),
		Now:          time.Now(),
	}, nil
}

// sinkPlan is the plan of one --sink output.
type sinkPlan struct {
	URL string `json:"url"`
	*lifecycle.RetentionResult
	listing lifecycle.Listing
}

// planJSON is `retention plan --format json`: the checkpoint's plan, and
// the sinks' when --sink is given.
type planJSON struct {
	*lifecycle.RetentionResult
	Sinks []sinkPlan `json:"sinks,omitempty"`
}

// retentionOptions returns the policy (retentionPolicy) and the sinks
// (sinkURLs) of a retention command on the checkpoint at url, checked.
func retentionOptions(c *cli.Context, url string) (lifecycle.RetentionPolicy, []string, error) {
	p, err := retentionPolicy(c)
	if err != nil {
		return p, nil, err
	}
	sinks, err := sinkURLs(c, url)
	return p, sinks, err
}

// sinkURLs returns --sink, checked: each a different location, none the
// checkpoint itself.
func sinkURLs(c *cli.Context, checkpointURL string) ([]string, error) {
	seen := map[string]bool{location(checkpointURL): true}
	var out []string
	for _, raw := range c.StringSlice("sink") {
		if raw = strings.TrimSpace(raw); raw == "" {
			return nil, usageErrorf(c, "--sink: want a file sink output URL")
		}
		if seen[location(raw)] {
			return nil, usageErrorf(c, "--sink %s: given twice, or the checkpoint itself", gateway.Redact(raw))
		}
		seen[location(raw)] = true
		out = append(out, raw)
	}
	return out, nil
}

// withSinks opens every --sink store, plans it and calls f with the plans
// (in flag order); the stores stay open during f.
func (e *env) withSinks(c *cli.Context, urls []string, p lifecycle.RetentionPolicy, f func(plans []sinkPlan, stores []gateway.Store) error) error {
	var plans []sinkPlan
	var stores []gateway.Store
	defer func() {
		for _, st := range stores {
			gateway.Close(st)
		}
	}()
	for _, raw := range urls {
		st, err := e.openStore(c.Context, c, raw)
		if err != nil {
			return err
		}
		stores = append(stores, st)
		l, r, err := e.sinkPlanFor(c, st, raw, p)
		if err != nil {
			return err
		}
		plans = append(plans, sinkPlan{URL: gateway.Redact(raw), RetentionResult: r, listing: l})
	}
	return f(plans, stores)
}

// retentionPlanFor reads the checkpoint at raw and plans it.
func (e *env) retentionPlanFor(c *cli.Context, st gateway.Store, raw string, p lifecycle.RetentionPolicy) (lifecycle.Listing, *lifecycle.RetentionResult, error) {
	return planRoot(c, lifecycle.PlanCheckpointRetention, st, "", raw, p)
}

// sinkPlanFor reads the manifest log of the sink output at raw and plans it.
func (e *env) sinkPlanFor(c *cli.Context, st gateway.Store, raw string, p lifecycle.RetentionPolicy) (lifecycle.Listing, *lifecycle.RetentionResult, error) {
	return planRoot(c, lifecycle.PlanSinkRetention, st, "--sink ", raw, p)
}

// planRoot plans the root st at raw (named as flag, "" for the argument):
// one that holds nothing to plan is unreadable input.
func planRoot(c *cli.Context, plan func(context.Context, gateway.Store, lifecycle.RetentionPolicy) (lifecycle.Listing, *lifecycle.RetentionResult, error),
	st gateway.Store, flag, raw string, p lifecycle.RetentionPolicy) (lifecycle.Listing, *lifecycle.RetentionResult, error) {
	l, r, err := plan(c.Context, st, p)
	if errors.Is(err, checkpoint.ErrNotCheckpoint) {
		return l, nil, &InputError{Err: fmt.Errorf("%s%s: %w", flag, gateway.Redact(raw), err)}
	}
	if err != nil {
		return l, nil, fmt.Errorf("retention %s%s: %w", flag, gateway.Redact(raw), err)
	}
	return l, r, nil
}

// queryIDOf is the query id in st's metadata ("" when it has none).
func queryIDOf(c *cli.Context, st gateway.Store) string {
	q, _ := checkpoint.ReadQueryID(c.Context, st)
	return q
}

func (e *env) retentionPlan(c *cli.Context) error {
	a, f, err := argsFormat(c, 1, 1)
	if err != nil {
		return err
	}
	p, sinks, err := retentionOptions(c, a[0])
	if err != nil {
		return err
	}
	out := c.String("out")
	if out == "-" || (c.IsSet("out") && out == "") {
		return usageErrorf(c, "--out %q: want the name of a new local file (the plan is printed as well)", out)
	}
	return e.withStore(c, a[0], func(st gateway.Store) error {
		l, r, err := e.retentionPlanFor(c, st, a[0], p)
		if err != nil {
			return err
		}
		return e.withSinks(c, sinks, p, func(plans []sinkPlan, _ []gateway.Store) error {
			if out != "" {
				if err := e.writePlanFile(c, out, p, lifecycle.NewPlanTarget(a[0], location(a[0]), queryIDOf(c, st), l, r), sinks, plans); err != nil {
					return err
				}
			}
			if f == "json" {
				return output.JSON(e.stdout, planJSON{RetentionResult: r, Sinks: plans})
			}
			if err := writePlanTable(e.stdout, r, c.Bool("all")); err != nil {
				return err
			}
			for _, sp := range plans {
				if err := writeSinkPlanTable(e.stdout, sp, c.Bool("all")); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

func writeSinkPlanTable(w io.Writer, sp sinkPlan, all bool) error {
	fmt.Fprintf(w, "\nsink %s (%s/):\n", sp.URL, checkpoint.SinkMetadataDir)
	t := output.NewTable(w)
	t.Row(fmt.Sprintf("remove %d manifests (%d bytes), keep %d", len(sp.Remove), sp.RemovedBytes, len(sp.Keep)))
	writeDecisions(t, sp.Remove, sp.Keep, all)
	return t.Flush()
}

// writeDecisions writes the removals (and with all the kept keys too) as
// rows ACTION KEY SIZE REASON.
func writeDecisions(t *output.Table, remove, keep []lifecycle.Decision, all bool) {
	rows := remove
	if all {
		rows = append(append([]lifecycle.Decision{}, remove...), keep...)
	}
	if len(rows) > 0 {
		t.Row("ACTION", "KEY", "SIZE", "REASON")
	}
	for _, d := range rows {
		t.Row(d.Action, d.Key, d.Size, d.Reason)
	}
}

func int64Text(v *int64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprint(*v)
}

func writePlanTable(w io.Writer, r *lifecycle.RetentionResult, all bool) error {
	t := output.NewTable(w)
	t.Row(fmt.Sprintf("latest offsets batch %s, latest commit %s, retain from batch %s",
		int64Text(r.LatestOffsets), int64Text(r.LatestCommit), int64Text(r.RetainFrom)))
	t.Row(fmt.Sprintf("remove %d keys (%d bytes), keep %d", len(r.Remove), r.RemovedBytes, len(r.Keep)))
	writeDecisions(t, r.Remove, r.Keep, all)
	return t.Flush()
}

func (e *env) retentionApply(c *cli.Context) error {
	if c.IsSet("plan") {
		return e.retentionApplyPlan(c)
	}
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	if err := checkConcurrency(c); err != nil {
		return err
	}
	p, sinks, err := retentionOptions(c, a[0])
	if err != nil {
		return err
	}
	eng, log, closeLog, err := e.policyAndLog(c)
	if err != nil {
		return err
	}
	defer closeLog()
	return e.withStore(c, a[0], func(st gateway.Store) error {
		_, r, err := e.retentionPlanFor(c, st, a[0], p)
		if err != nil {
			return err
		}
		return e.withSinks(c, sinks, p, func(plans []sinkPlan, sinkStores []gateway.Store) error {
			// Plan everything before deleting anything: a sink that does
			// not read stops the command before the checkpoint is touched.
			facts := policy.Facts{LatestBatch: r.LatestOffsets, RetainFrom: r.RetainFrom, QueryID: queryIDOf(c, st)}
			if err := e.applyPlan(c, st, a[0], r, facts, eng, log, "", "keys"); err != nil {
				return err
			}
			for i, sp := range plans {
				if err := e.applyPlan(c, sinkStores[i], sinks[i], sp.RetentionResult, policy.Facts{}, eng, log, "sink "+sp.URL+": ", "manifests"); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// applyPlan deletes what r removes from st (at raw) as a retention
// principal whose policy plan is r, and reports it.
func (e *env) applyPlan(c *cli.Context, st gateway.Store, raw string, r *lifecycle.RetentionResult, facts policy.Facts,
	eng *policy.Engine, log *policy.DecisionLog, label, what string) error {
	if len(r.Remove) == 0 {
		_, err := fmt.Fprintf(e.stdout, "%snothing to remove\n", label)
		return err
	}
	id := r.ID()
	guarded, done, err := e.guard(c.Context, c, st, policy.GuardConfig{Engine: eng, Log: log,
		Principal: policy.Principal{ID: c.String("principal"), Kind: policy.KindRetention}, StoreURL: raw,
		CheckpointRoot: label == "", Facts: facts, Plan: &policy.Plan{ID: id, Obsolete: r.Obsolete()}})
	if err != nil {
		return err
	}
	defer done()
	opts := lifecycle.RetentionApplyOptions{Concurrency: c.Int("concurrency")}
	if bar := e.progressBar(c, "deleting"); bar != nil {
		opts.Progress = func(done, total int) { bar.set(done, total, "") }
		defer bar.close()
	}
	res, err := lifecycle.ApplyRetention(c.Context, guarded, r, opts)
	if err != nil {
		return fmt.Errorf("retention apply %s (plan %s): %d deleted before: %w", gateway.Redact(raw), id, res.Deleted, err)
	}
	_, err = fmt.Fprintf(e.stdout, "%splan %s: deleted %d %s (%d bytes), %d already gone\n", label, id, res.Deleted, what, r.RemovedBytes, res.Missing)
	return err
}

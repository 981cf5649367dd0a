package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
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
			"the gateway as a principal of kind retention, so the policy refuses any key not planned.",
		Subcommands: []*cli.Command{
			{
				Name:      "plan",
				Usage:     "print what retention would keep and remove, with reasons",
				ArgsUsage: "URL",
				Flags: append(retentionFlags(), formatFlag(),
					&cli.BoolFlag{Name: "all", Usage: "table: list kept keys too"}),
				Action: e.retentionPlan,
			},
			{
				Name:      "apply",
				Usage:     "delete what the plan removes, through the policy authorizer",
				ArgsUsage: "URL",
				Flags: append(append(retentionFlags(), policyFlags()...), decisionLogFlag(),
					&cli.StringFlag{Name: "principal", Value: "ckgate-retention", Usage: "principal `ID` (kind retention)"},
					&cli.IntFlag{Name: "concurrency", Value: lifecycle.DefaultApplyConcurrency, Usage: "at most `N` deletes at once"},
					&cli.BoolFlag{Name: "progress", Usage: "show a progress bar (default: when stderr is a terminal)"}),
				Action: e.retentionApply,
			},
		},
	}
}

func retentionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "min-batches", Value: lifecycle.DefaultMinBatches, Usage: "keep at least the latest `N` batches"},
		&cli.DurationFlag{Name: "retain-for", Usage: "also keep every batch younger than `DURATION` (e.g. 72h)"},
		&cli.DurationFlag{Name: "log-retention", Value: lifecycle.DefaultLogRetention, Usage: "keep _ckgate/ ledgers younger than `DURATION`"},
	}
}

// retentionPlanFor reads the checkpoint and plans.
func (e *env) retentionPlanFor(c *cli.Context, st gateway.Store, raw string) (*lifecycle.Result, error) {
	if n := c.Int("min-batches"); n < 1 {
		return nil, usageErrorf(c, "--min-batches %d: want 1 or more", n)
	}
	if c.Duration("retain-for") < 0 || c.Duration("log-retention") <= 0 {
		return nil, usageErrorf(c, "--retain-for and --log-retention: want a positive duration")
	}
	p := lifecycle.Policy{
		MinBatches:   c.Int("min-batches"),
		RetainFor:    c.Duration("retain-for"),
		LogRetention: c.Duration("log-retention"),
		Now:          time.Now(),
	}
	l, err := lifecycle.Read(c.Context, st, p)
	if err != nil {
		return nil, fmt.Errorf("retention %s: %w", gateway.Redact(raw), err)
	}
	if len(l.Objects) == 0 {
		return nil, &InputError{Err: fmt.Errorf("%s: %w (nothing under it)", gateway.Redact(raw), checkpoint.ErrNotCheckpoint)}
	}
	r, err := lifecycle.Plan(l, p)
	if err != nil {
		return nil, fmt.Errorf("retention %s: %w", gateway.Redact(raw), err)
	}
	return r, nil
}

func (e *env) retentionPlan(c *cli.Context) error {
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	f, err := format(c)
	if err != nil {
		return err
	}
	return e.withStore(c, a[0], func(st gateway.Store) error {
		r, err := e.retentionPlanFor(c, st, a[0])
		if err != nil {
			return err
		}
		if f == "json" {
			return printJSON(e.stdout, r)
		}
		return writePlanTable(e.stdout, r, c.Bool("all"))
	})
}

func int64Text(v *int64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprint(*v)
}

func writePlanTable(w io.Writer, r *lifecycle.Result, all bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "latest offsets batch %s, latest commit %s, retain from batch %s\n",
		int64Text(r.LatestOffsets), int64Text(r.LatestCommit), int64Text(r.RetainFrom))
	fmt.Fprintf(tw, "remove %d keys (%d bytes), keep %d\n", len(r.Remove), r.RemovedBytes, len(r.Keep))
	rows := r.Remove
	if all {
		rows = append(append([]lifecycle.Decision{}, r.Remove...), r.Keep...)
	}
	if len(rows) > 0 {
		fmt.Fprintln(tw, "ACTION\tKEY\tSIZE\tREASON")
	}
	for _, d := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", d.Action, d.Key, d.Size, d.Reason)
	}
	return tw.Flush()
}

// planID names a plan by its content.
func planID(r *lifecycle.Result) string {
	h := sha256.New()
	for _, d := range r.Remove {
		fmt.Fprintf(h, "%s\n", d.Key)
	}
	return "retention-" + hex.EncodeToString(h.Sum(nil))[:16]
}

func (e *env) retentionApply(c *cli.Context) error {
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	if c.Int("concurrency") < 1 {
		return usageErrorf(c, "--concurrency %d: want 1 or more", c.Int("concurrency"))
	}
	eng, err := e.policyEngine(c)
	if err != nil {
		return err
	}
	log, closeLog, err := e.decisionLog(c)
	if err != nil {
		return err
	}
	defer closeLog()
	return e.withStore(c, a[0], func(st gateway.Store) error {
		r, err := e.retentionPlanFor(c, st, a[0])
		if err != nil {
			return err
		}
		if len(r.Remove) == 0 {
			_, err := fmt.Fprintln(e.stdout, "nothing to remove")
			return err
		}
		id := planID(r)
		facts := policy.Facts{LatestBatch: r.LatestOffsets, RetainFrom: r.RetainFrom}
		if data, _, err := st.Get(c.Context, checkpoint.MetadataKey); err == nil {
			if q, err := policy.ParseMetadata(data); err == nil {
				facts.QueryID = q
			}
		}
		auth := policy.NewAuthorizer(eng, policy.Principal{ID: c.String("principal"), Kind: policy.KindRetention},
			a[0], facts, log, policy.WithPlan(&policy.Plan{ID: id, Obsolete: r.Obsolete()}), policy.WithStoreURL(a[0]))
		guarded := gateway.WithAuthorizer(st, auth)
		opts := lifecycle.ApplyOptions{Concurrency: c.Int("concurrency")}
		if bar := e.progressBar(c, len(r.Remove)); bar != nil {
			opts.Progress = func(done, _ int) { _ = bar.Set(done) }
			defer bar.Close()
		}
		res, err := lifecycle.Apply(c.Context, guarded, r, opts)
		if err != nil {
			return fmt.Errorf("retention apply %s (plan %s): %d deleted before: %w", gateway.Redact(a[0]), id, res.Deleted, err)
		}
		_, err = fmt.Fprintf(e.stdout, "plan %s: deleted %d keys (%d bytes), %d already gone\n", id, res.Deleted, r.RemovedBytes, res.Missing)
		return err
	})
}

// progressBar returns a bar on stderr when it is a terminal (or --progress).
func (e *env) progressBar(c *cli.Context, total int) *progressbar.ProgressBar {
	show := c.Bool("progress")
	if !c.IsSet("progress") {
		f, ok := e.stderr.(*os.File)
		show = ok && term.IsTerminal(int(f.Fd()))
	}
	if !show {
		return nil
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetDescription("deleting"),
		progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish())
}

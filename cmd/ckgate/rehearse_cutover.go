package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/internal/output"
	"github.com/ckgate/ckgate/rehearse"
)

// cutoverFlags are the flags of `ckgate rehearse --candidate NEW_SPEC`.
func cutoverFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "candidate", Usage: "rehearse a cutover: run the changed query of `NEW_SPEC` against SPEC's on the same bounded input and reconcile them"},
		&cli.Int64Flag{Name: "from-batch", Usage: "with --candidate: re-run the checkpoint's batches from `N` on, both from the state after batch N-1", DefaultText: "the first batch the checkpoint holds"},
		&cli.StringFlag{Name: "interval", Usage: "with --candidate: re-run the batches whose input holds event times in `START..END` (RFC 3339 or epoch ms)"},
		&cli.Int64Flag{Name: "restart-at", Usage: "with --candidate: stop both runs after batch `K` and restart them from their checkpoints"},
	}
}

// cutoverHelp is the part of rehearse's description about --candidate.
const cutoverHelp = "Cutover (--candidate NEW_SPEC): on isolated copies of the production checkpoint (or, when there is\n" +
	"none, of a baseline run of SPEC over the input), SPEC and NEW_SPEC each re-run the same bounded input\n" +
	"(--from-batch N: the checkpoint's batches N to its latest, with their logged offsets; --interval\n" +
	"START..END: the batches whose input holds event times in it) from the same restored state (after\n" +
	"batch N-1), into isolated outputs, and the outputs are reconciled by business key: rows only in the\n" +
	"current, only in the candidate, changed (with the fields that differ), equal; late rows dropped and\n" +
	"accepted by each, the input rows handled differently named; duplicates; state rows and bytes before\n" +
	"and after. A candidate that compat calls not_allowed (a changed key, window or gap) cannot restore the\n" +
	"state: it runs from empty state at the boundary, as `ckgate fresh-start` starts a new root, and the\n" +
	"report says it needs a new checkpoint and what the boundary loses. --restart-at K stops both runs\n" +
	"after batch K and restarts them from their checkpoints, so the restore path is compared too.\n" +
	"Verdict (JSON: verdict same|differs, needs_new_checkpoint): exit 0 same, 1 differs (also when it\n" +
	"needs a new checkpoint), 2 cannot rehearse."

func (e *env) rehearseCutover(c *cli.Context, specPath, format string) error {
	for _, f := range []string{"scenarios", "seed", "fault-rate"} {
		if c.IsSet(f) {
			return usageErrorf(c, "--%s is for the failure drills; --candidate rehearses a cutover", f)
		}
	}
	opts := rehearse.CutoverOptions{Options: rehearse.Options{Input: c.String("input"), Checkpoint: c.String("checkpoint"),
		Workdir: c.String("workdir"), Keep: c.Bool("keep"), Registry: e.registry, Logger: e.log}}
	if c.IsSet("from-batch") && c.IsSet("interval") {
		return usageErrorf(c, "give --from-batch N or --interval START..END, not both")
	}
	if c.IsSet("from-batch") {
		n := c.Int64("from-batch")
		if n < 0 {
			return usageErrorf(c, "--from-batch %d: want a batch id (0 or more)", n)
		}
		opts.FromBatch = &n
	}
	if raw := c.String("interval"); raw != "" {
		iv, err := rehearse.ParseInterval(raw)
		if err != nil {
			return usageErrorf(c, "--interval: %v", err)
		}
		opts.Interval = &iv
	}
	if c.IsSet("restart-at") {
		k := c.Int64("restart-at")
		opts.RestartAt = &k
	}
	cur, err := spec.Load(specPath)
	if err != nil {
		return &InputError{Err: err}
	}
	cand, err := spec.Load(c.String("candidate"))
	if err != nil {
		return &InputError{Err: fmt.Errorf("--candidate: %w", err)}
	}
	bar := e.progressBar(c, "rehearsing the cutover")
	opts.Progress = bar.set
	rep, err := rehearse.Cutover(c.Context, cur, cand, opts)
	bar.close()
	if err != nil {
		return rehearseError(err)
	}
	if err := render(e.stdout, format, rep, func() error { printCutover(e, rep); return nil }); err != nil {
		return err
	}
	if rep.Verdict != rehearse.VerdictSame {
		return &FindingsError{Count: len(rep.Reasons), What: "differences between the current query and the candidate"}
	}
	return nil
}

func printCutover(e *env, rep *rehearse.CutoverReport) {
	w := e.stdout
	fmt.Fprintf(w, "rehearse cutover %s → %s: input %s, %s sink\n", rep.Spec, rep.Candidate, rep.Input, rep.Sink)
	printWorkdir(w, rep.Workdir, rep.Kept, rep.Production, "", "; a baseline run of "+rep.Spec+" over the input stands in for it")
	b := rep.Boundary
	fmt.Fprintf(w, "boundary:   batches %d-%d (%d input files", b.FromBatch, b.ToBatch, b.Files)
	if b.Interval != "" {
		fmt.Fprintf(w, ", event times %s", b.Interval)
	}
	fmt.Fprintf(w, "), state after batch %d: %d rows, %s", b.FromBatch-1, b.StateRows, bytesText(b.StateBytes))
	if b.RestartAt != nil {
		fmt.Fprintf(w, "; both runs restart after batch %d", *b.RestartAt)
	}
	fmt.Fprintln(w)
	for _, ch := range rep.Compat {
		fmt.Fprintf(w, "compat:     %s %s: %s → %s: %s\n", ch.Class, ch.Field, output.Dash(ch.Current), output.Dash(ch.Proposed), ch.Reason)
	}
	fmt.Fprintln(w)
	t := output.NewTable(w)
	t.Row("RUN", "STATE", "BATCHES", "RESTARTS", "ROWS IN", "ROWS OUT", "LATE DROPPED", "LATE ACCEPTED", "DUPLICATES", "STATE BEFORE→AFTER")
	for _, r := range []struct {
		name string
		s    rehearse.RunStats
	}{{"current", rep.Current}, {"candidate", rep.Cand}} {
		st := "restored"
		if !r.s.Restored {
			st = "fresh start"
		}
		t.Row(r.name, st, r.s.Batches, r.s.Restarts, r.s.RowsIn, r.s.RowsOut, r.s.LateDropped, r.s.LateAccepted, r.s.Duplicates,
			fmt.Sprintf("%d rows %s → %d rows %s", r.s.StateRowsBefore, bytesText(r.s.StateBytesBefore), r.s.StateRowsAfter, bytesText(r.s.StateBytesAfter)))
	}
	t.Flush()
	fmt.Fprintf(w, "\nreconcile %s\n", rep.Reconcile)
	const shown = 10
	for i, d := range rep.Reconcile.Rows {
		if i == shown {
			fmt.Fprintf(w, "  … %d more named in --format json\n", len(rep.Reconcile.Rows)-shown)
			break
		}
		switch d.Side {
		case "changed":
			fmt.Fprintf(w, "  changed {%s}: %s\n    current   %s\n    candidate %s\n", d.Key, strings.Join(d.Fields, ", "), d.Current, d.Candidate)
		case "only_current":
			fmt.Fprintf(w, "  only in the current:   %s\n", d.Current)
		default:
			fmt.Fprintf(w, "  only in the candidate: %s\n", d.Candidate)
		}
	}
	if len(rep.LateRows) > 0 {
		fmt.Fprintln(w, "late rows handled differently:")
		for i, l := range rep.LateRows {
			if i == shown {
				fmt.Fprintf(w, "  … %d more named in --format json\n", len(rep.LateRows)-shown)
				break
			}
			fmt.Fprintf(w, "  %s: current %s, candidate %s: %s\n", l.File, l.Current, l.Candidate, l.Row)
		}
	}
	if rep.Loses != "" {
		fmt.Fprintf(w, "boundary loses: %s\n", rep.Loses)
	}
	fmt.Fprintln(w)
	if rep.Verdict == rehearse.VerdictSame {
		fmt.Fprintf(w, "verdict: same: the candidate's output reconciles with the current one row for row (%s)\n", rep.Duration.Round(time.Millisecond))
		return
	}
	head := "differs"
	if rep.NeedsNewCheckpoint {
		head = "differs: candidate cannot restore this state, needs a new checkpoint"
	}
	fmt.Fprintf(w, "verdict: %s\n", head)
	for _, r := range rep.Reasons {
		fmt.Fprintf(w, "  - %s\n", r)
	}
}

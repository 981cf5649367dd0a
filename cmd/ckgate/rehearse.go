package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/internal/output"
	"github.com/ckgate/ckgate/rehearse"
)

// rehearseCommand is `ckgate rehearse SPEC`: failure drills on an
// isolated copy of the query.
func (e *env) rehearseCommand() *cli.Command {
	var sc strings.Builder
	for _, s := range rehearse.Scenarios() {
		fmt.Fprintf(&sc, "   %d. %s\n", s.Num, s.Name)
		for _, l := range wrapText(s.Summary, 92) {
			fmt.Fprintf(&sc, "      %s\n", l)
		}
	}
	return &cli.Command{
		Name:      "rehearse",
		Usage:     "run crash, fencing, late-data and store-fault drills on an isolated copy of a query and reconcile its output",
		ArgsUsage: "[--candidate NEW_SPEC [--from-batch N | --interval START..END] [--restart-at K]] SPEC",
		Description: "Runs the query of SPEC with ckgate's engine on isolated copies: every drill has its own checkpoint\n" +
			"and sink under a work directory (a temporary one, or --workdir). The spec's files sink is redirected\n" +
			"there; an http sink is redirected to an in-process receiver that counts effects by idempotency key:\n" +
			"the production endpoint is never called. The production checkpoint (--checkpoint, default\n" +
			"checkpoints/<name>) is only read, to archive a verified copy into the work directory; the production\n" +
			"sink is never opened. The input is the spec's files source, or --input DIR (JSON-lines files with\n" +
			"the rows the source delivers; required for rate and kafka sources).\n\n" +
			"Scenarios (--scenarios takes names or numbers, comma-separated; default all):\n" + sc.String() + "\n" +
			"Reconciliation: the same query runs fault-free on an in-memory store over the same input with the\n" +
			"same batch plan (files per batch, hence the same watermarks). Each drill's sink is compared with it\n" +
			"as a multiset by business key (the operator's keys and window, or the whole row): lost = reference\n" +
			"rows the drill lacks, duplicated = extra copies or rows the reference never produced. Late rows\n" +
			"dropped, rows in and the state rows left at the end must match too, and the checkpoint log must\n" +
			"have no gap. Random choices (store faults, receiver failures) follow --seed (default: the clock,\n" +
			"printed in the report).\n\n" +
			cutoverHelp + "\n\n" +
			"Exit status: 0 every scenario passed (--candidate: same); 1 a scenario lost or duplicated an effect\n" +
			"or failed (--candidate: differs, also when it needs a new checkpoint); 2 could not rehearse (bad\n" +
			"spec, missing input, a source or sink that cannot be isolated).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "input", Usage: "read the input from `DIR` (JSON-lines files) instead of the spec's source"},
			&cli.StringFlag{Name: "checkpoint", Usage: "the production checkpoint `URL` (only read; default checkpoints/<spec name>)"},
			&cli.StringFlag{Name: "workdir", Usage: "put the drills' checkpoints and sinks in `DIR` (empty or new; kept)"},
			&cli.BoolFlag{Name: "keep", Usage: "keep the temporary work directory"},
			&cli.StringSliceFlag{Name: "scenarios", Usage: "run only these scenarios (`LIST` of names or numbers)"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed `N` of the random faults", DefaultText: "from the clock, printed in the report"},
			&cli.Float64Flag{Name: "fault-rate", Value: 0.10, Usage: "share `RATE` of store requests that fail in store-faults (more than 0, at most 0.5)"},
			progressFlag(),
			formatFlag(),
		}, cutoverFlags()...),
		Action: e.rehearse,
	}
}

func (e *env) rehearse(c *cli.Context) error {
	a, f, err := argsFormat(c, 1, 1)
	if err != nil {
		return err
	}
	if c.String("candidate") != "" {
		return e.rehearseCutover(c, a[0], f)
	}
	for _, fl := range []string{"from-batch", "interval", "restart-at"} {
		if c.IsSet(fl) {
			return usageErrorf(c, "--%s needs --candidate NEW_SPEC", fl)
		}
	}
	rate := c.Float64("fault-rate")
	if rate <= 0 || rate > 0.5 {
		return usageErrorf(c, "--fault-rate %g: want more than 0 and at most 0.5", rate)
	}
	seed := c.Uint64("seed")
	if !c.IsSet("seed") {
		seed = uint64(time.Now().UnixNano())
	}
	s, err := spec.Load(a[0])
	if err != nil {
		return &InputError{Err: err}
	}
	bar := e.progressBar(c, "rehearsing")
	rep, err := rehearse.Run(c.Context, s, rehearse.Options{Progress: bar.set,
		Input: c.String("input"), Checkpoint: c.String("checkpoint"), Workdir: c.String("workdir"), Keep: c.Bool("keep"),
		Scenarios: c.StringSlice("scenarios"), Seed: seed, Registry: e.registry, FaultRate: rate, Logger: e.log,
	})
	bar.close()
	if err != nil {
		return rehearseError(err)
	}
	if err := render(e.stdout, f, rep, func() error { printRehearsal(e, rep); return nil }); err != nil {
		return err
	}
	if n := rep.Failed(); n > 0 {
		return &FindingsError{Count: n, What: "rehearse scenarios failed (lost, duplicated or not exercised)"}
	}
	return nil
}

// rehearseError is err of a drill or a cutover: a setup that failed
// (ErrSetup: the spec, input or checkpoint) is unreadable input.
func rehearseError(err error) error {
	if errors.Is(err, rehearse.ErrSetup) {
		return &InputError{Err: err}
	}
	return err
}

// printWorkdir prints where a rehearsal worked (the work dir, kept or
// removed) and what it did with the production checkpoint p: archived it
// (archived adds to the archive's figures) or not (missing adds to why).
func printWorkdir(w io.Writer, workdir string, kept bool, p rehearse.Production, archived, missing string) {
	wd := workdir + " (removed)"
	if kept {
		wd = workdir
	}
	fmt.Fprintf(w, "work dir:   %s\n", wd)
	if p.Found && p.Archive != "" {
		fmt.Fprintf(w, "production: %s read only, archived to %s (%d files, %s%s)\n", p.Checkpoint, p.Archive, p.Files, bytesText(p.Bytes), archived)
	} else {
		fmt.Fprintf(w, "production: %s: %s%s\n", p.Checkpoint, p.Note, missing)
	}
}

func printRehearsal(e *env, rep *rehearse.Report) {
	w := e.stdout
	fmt.Fprintf(w, "rehearse %s: input %s (%d files), %s sink, seed %d\n", rep.Spec, rep.Input, rep.Reference.Files, rep.Sink, rep.Seed)
	printWorkdir(w, rep.Workdir, rep.Kept, rep.Production, ", "+output.Dash(rep.Production.Status), "")
	r := rep.Reference
	fmt.Fprintf(w, "reference:  %d batches, %d rows in, %d rows out, %d late rows dropped, %d state rows at the end\n\n",
		r.Batches, r.RowsIn, r.RowsOut, r.LateDropped, r.StateRows)
	t := output.NewTable(w)
	t.Row("#", "SCENARIO", "RESULT", "ROWS IN", "ROWS OUT", "LOST", "DUPLICATED", "LATE DROPPED", "LATE ACCEPTED", "STATE BEFORE→AFTER")
	for i, s := range rep.Scenarios {
		res := "pass"
		if !s.OK {
			res = "FAIL"
		}
		t.Row(num(s.Name, i), s.Name, res, s.RowsIn, s.RowsOut, s.Lost, s.Duplicated, s.LateDropped, s.LateAccepted,
			fmt.Sprintf("%d→%d", s.StateRowsBefore, s.StateRowsAfter))
	}
	t.Flush()
	fmt.Fprintln(w)
	for i, s := range rep.Scenarios {
		fmt.Fprintf(w, "%d %s: %s\n", num(s.Name, i), s.Name, s.Detail)
	}
	fmt.Fprintln(w)
	if n := rep.Failed(); n > 0 {
		fmt.Fprintf(w, "verdict: FAIL: %d of %d scenarios lost or duplicated a business effect or failed (seed %d)\n", n, len(rep.Scenarios), rep.Seed)
		return
	}
	fmt.Fprintf(w, "verdict: PASS: every business effect exactly once in all %d scenarios (seed %d, %s)\n", len(rep.Scenarios), rep.Seed, rep.Duration.Round(time.Millisecond))
}

// num is the scenario's number in rehearse.Scenarios.
func num(name string, i int) int {
	for _, s := range rehearse.Scenarios() {
		if s.Name == name {
			return s.Num
		}
	}
	return i + 1
}

// wrapText breaks s into lines of at most width characters at spaces.
func wrapText(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

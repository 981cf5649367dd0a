package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/compat"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/output"
)

// compatCommand is `ckgate compat URL --spec SPEC | --plan PLAN.json`:
// may this query restart from this checkpoint?
func (e *env) compatCommand() *cli.Command {
	return &cli.Command{
		Name:      "compat",
		Usage:     "check that a changed query may restart from an existing checkpoint",
		ArgsUsage: "URL",
		Description: "Compares the proposed query (--spec: a ckgate spec; --plan: a PLAN.json describing a Spark\n" +
			"query, see docs/compat.md) with what the checkpoint at URL records, and classifies every\n" +
			"difference as Spark's \"Recovery Semantics after Changes in a Streaming Query\" does:\n" +
			"allowed, not_allowed, or undefined (allowed, but the effect depends on the query), with the\n" +
			"rule and the reason. Covered: number and kind of sources; source identity (another topic,\n" +
			"topic id, path or table id is another source, even with the same schema); source options;\n" +
			"sink kind and path; filters and projection; stateful operators added, removed or changed;\n" +
			"grouping, dedup and join keys and their types; state schemas; aggregates; window and gap;\n" +
			"watermark and event-time column; state partitions; output mode; pinned confs.\n\n" +
			"A ckgate checkpoint records its plan in _ckgate/plan.json, which the engine enforces, with the\n" +
			"latest run's watermark, where filter, source and sink options and state format: nothing is\n" +
			"unchecked (an older plan.json lacks those: they are). A watermark change is undefined, and\n" +
			"the reason says which late rows are handled differently (JSON: the change's \"late\"). A Spark\n" +
			"checkpoint records its sources, pinned confs, operator metadata and state schemas only; what\n" +
			"it does not record is listed as unchecked. --baseline names the PLAN.json (or spec) of the\n" +
			"query that wrote the checkpoint, to compare those parts too (the checkpoint wins where both\n" +
			"speak). --print-recorded prints what the checkpoint records as a PLAN.json to start from.\n" +
			"--resolve asks the Kafka brokers of the proposed query for the cluster and topic ids. --delta\n" +
			"[N=]TABLE_URL reads the id of the Delta table source N will read: another id than the recorded\n" +
			"reservoirId is not_allowed (Spark: DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE).\n\n" +
			"Exit status: 0 compatible (undefined changes are printed as warnings), 1 a not_allowed change\n" +
			"(or, with --strict, an undefined one); 2 not a checkpoint, or a plan or spec that cannot be read.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "spec", Usage: "the proposed query: a ckgate spec `FILE`"},
			&cli.StringFlag{Name: "plan", Usage: "the proposed query: a PLAN.json `FILE`"},
			&cli.StringFlag{Name: "baseline", Usage: "the PLAN.json or spec `FILE` of the query that wrote the checkpoint"},
			&cli.BoolFlag{Name: "print-recorded", Usage: "print what the checkpoint records, as PLAN.json"},
			&cli.BoolFlag{Name: "resolve", Usage: "ask the proposed Kafka brokers for cluster and topic ids"},
			&cli.BoolFlag{Name: "strict", Usage: "exit 1 on undefined changes too"},
			deltaFlag(),
			formatFlag(),
		},
		Action: e.compat,
	}
}

// compatOutput is the JSON form: the checkpoint and the comparison.
type compatOutput struct {
	Checkpoint string `json:"checkpoint"`
	QueryID    string `json:"query_id"`
	Status     string `json:"status"`
	Proposed   string `json:"proposed_from"`
	*compat.Result
}

func (e *env) compat(c *cli.Context) error {
	a, f, err := argsFormat(c, 1, 1)
	if err != nil {
		return err
	}
	printRecorded := c.Bool("print-recorded")
	specFile, planFile := c.String("spec"), c.String("plan")
	switch {
	case printRecorded && (specFile != "" || planFile != "" || c.IsSet("baseline")):
		return usageErrorf(c, "--print-recorded takes no --spec, --plan or --baseline")
	case !printRecorded && (specFile == "") == (planFile == ""):
		return usageErrorf(c, "want one of --spec SPEC or --plan PLAN.json")
	}
	var prop *compat.Plan
	from := specFile + planFile
	if !printRecorded {
		if prop, err = loadProposal(specFile, planFile); err != nil {
			return err
		}
		if c.Bool("resolve") {
			if err := compat.ResolveKafka(c.Context, prop); err != nil {
				return fmt.Errorf("--resolve: %w", err)
			}
		}
	}
	tables, err := deltaTables(c)
	if err != nil {
		return err
	}
	var base *compat.Plan
	if b := c.String("baseline"); b != "" {
		if base, err = loadBaseline(b); err != nil {
			return err
		}
	}
	return e.withStore(c, a[0], func(s gateway.Store) error {
		url := gateway.Redact(a[0])
		rep, err := checkpoint.Inspect(c.Context, s, checkpoint.Options{MaxBatches: 1, MaxStateVersions: -1})
		if errors.Is(err, checkpoint.ErrNotCheckpoint) {
			return &InputError{Err: fmt.Errorf("%s: %w", url, err)}
		}
		if err != nil {
			return fmt.Errorf("inspect %s: %w", url, err)
		}
		rec, err := compat.FromCheckpoint(c.Context, s, rep)
		if err != nil {
			return &InputError{Err: fmt.Errorf("%s: %w", url, err)}
		}
		if rep.Status == checkpoint.StatusInconsistent || rep.HasErrors() {
			rec.Notes = append(rec.Notes, fmt.Sprintf("the checkpoint is %s with error findings: run ckgate inspect %s", rep.Status, url))
		}
		if printRecorded {
			return e.printRecorded(rec)
		}
		if base != nil {
			rec = compat.WithBaseline(rec, base)
		}
		if len(tables) > 0 {
			if err := e.proposeDeltaIDs(c.Context, e.openerFor(c), rec, prop, tables); err != nil {
				if ie := deltaInputError(err); ie != nil {
					return ie
				}
				return err
			}
		}
		res := compat.Compare(rec, prop)
		out := compatOutput{Checkpoint: url, QueryID: rep.QueryID, Status: string(rep.Status), Proposed: from, Result: res}
		if f == "json" {
			if err := output.JSON(e.stdout, out); err != nil {
				return err
			}
		} else if err := writeCompatTable(e.stdout, out); err != nil {
			return err
		}
		return compatVerdict(res, c.Bool("strict"))
	})
}

func loadProposal(specFile, planFile string) (*compat.Plan, error) {
	if specFile != "" {
		s, err := spec.Load(specFile)
		if err != nil {
			return nil, &InputError{Err: err}
		}
		p, err := compat.FromSpec(s, compat.SpecOptions{}) // relative paths as `ckgate run` resolves them
		if err != nil {
			return nil, &InputError{Err: fmt.Errorf("%s: %w", specFile, err)}
		}
		return p, nil
	}
	return readPlanFile(planFile)
}

func readPlanFile(name string) (*compat.Plan, error) {
	data, err := gateway.ReadRegularFile(name, 0)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	p, err := compat.ParsePlan(data)
	if err != nil {
		var pe *compat.PlanError
		if errors.As(err, &pe) {
			pe.File = name
		}
		return nil, &InputError{Err: err}
	}
	return p, nil
}

// loadBaseline reads a PLAN.json, or a spec (.yaml, .yml).
func loadBaseline(name string) (*compat.Plan, error) {
	if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
		return loadProposal(name, "")
	}
	return readPlanFile(name)
}

// printRecorded writes the recorded plan as PLAN.json on stdout, and what
// it lacks as notes on stderr.
func (e *env) printRecorded(rec *compat.Recorded) error {
	p := *rec.Plan
	p.Confs = compat.ConfValues{}
	for k, v := range rec.Confs {
		if slices.Contains(compat.EnforcedConfs, k) {
			p.Confs[k] = v // the confs a restart may not change; the others are pinned anyway
		}
	}
	if _, err := e.stdout.Write(p.Encode()); err != nil {
		return err
	}
	u := rec.Unknown()
	for _, k := range slices.Sorted(maps.Keys(u)) {
		fmt.Fprintf(e.stderr, "ckgate: not recorded: %s: %s\n", k, u[k])
	}
	for i, s := range rec.Sources {
		if s.Kind == "long" {
			fmt.Fprintf(e.stderr, "ckgate: sources[%d]: a long offset (memory, socket, rate, or a Spark 2.1 file source): set its kind\n", i)
		}
	}
	if rec.WatermarkMs > 0 {
		fmt.Fprintf(e.stderr, "ckgate: the batches have a watermark (%d ms in the latest): set the watermark delay (\"watermark\": \"10s\")\n", rec.WatermarkMs)
	}
	for i, o := range rec.Operators {
		if o.Kind == "" {
			fmt.Fprintf(e.stderr, "ckgate: operators[%d]: which operator wrote state/%d is not recorded (Spark < 4.0): set its kind\n", i, *o.ID)
		}
	}
	for _, n := range rec.Notes {
		fmt.Fprintf(e.stderr, "ckgate: %s\n", n)
	}
	return nil
}

func compatVerdict(r *compat.Result, strict bool) error {
	first := func(c compat.Class) string {
		for _, ch := range r.Changes {
			if ch.Class == c {
				return ch.Rule + " " + ch.Field
			}
		}
		return ""
	}
	if n := r.Count(compat.NotAllowed); n > 0 {
		what := "changes are not allowed"
		if n == 1 {
			what = "change is not allowed"
		}
		return &FindingsError{Count: n, What: what + " (first: " + first(compat.NotAllowed) + ")"}
	}
	if n := r.Count(compat.Undefined); strict && n > 0 {
		what := "changes are undefined (--strict)"
		if n == 1 {
			what = "change is undefined (--strict)"
		}
		return &FindingsError{Count: n, What: what + " (first: " + first(compat.Undefined) + ")"}
	}
	return nil
}

func writeCompatTable(w io.Writer, o compatOutput) error {
	r := o.Result
	var b strings.Builder
	t := output.NewTable(&b)
	t.Row("CHECKPOINT", fmt.Sprintf("%s (%s, query %s, %s)", o.Checkpoint, r.Writer, output.Dash(o.QueryID), o.Status))
	t.Row("PROPOSED", o.Proposed)
	verdict := "COMPATIBLE"
	if !r.Compatible {
		verdict = "NOT COMPATIBLE"
	} else if r.Count(compat.Undefined) > 0 {
		verdict = "COMPATIBLE, with undefined changes (their effect depends on the query)"
	}
	t.Row("VERDICT", fmt.Sprintf("%s: %d not allowed, %d undefined, %d allowed; %d unchecked", verdict,
		r.Count(compat.NotAllowed), r.Count(compat.Undefined), r.Count(compat.Allowed), len(r.Unchecked)))
	t.Flush()
	rank := map[compat.Class]int{compat.NotAllowed: 0, compat.Undefined: 1, compat.Allowed: 2}
	changes := slices.Clone(r.Changes)
	slices.SortStableFunc(changes, func(a, b compat.Change) int { return rank[a.Class] - rank[b.Class] })
	if len(changes) > 0 {
		b.WriteString("\nCHANGES\n")
	}
	for _, ch := range changes {
		fmt.Fprintf(&b, "  %-11s  %s  %s\n", strings.ToUpper(string(ch.Class)), ch.Rule, ch.Field)
		fmt.Fprintf(&b, "      recorded  %s\n      proposed  %s\n      why       %s\n", ch.Recorded, ch.Proposed, ch.Reason)
	}
	if len(changes) == 0 {
		b.WriteString("\nCHANGES: none\n")
	}
	if len(r.Unchecked) > 0 {
		b.WriteString("\nUNCHECKED (not compared: give them with --baseline, or in the plan)\n")
		t = output.NewTable(&b).Indent("  ")
		for _, u := range r.Unchecked {
			t.Row(u.Rule, u.Field, u.Reason)
		}
		t.Flush()
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nNOTES\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

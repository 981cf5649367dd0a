package rehearse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// ErrSetup wraps every reason Run cannot rehearse at all: a source or sink
// it cannot isolate, missing or unreadable input, an unusable work
// directory, an unknown scenario.
var ErrSetup = errors.New("cannot rehearse")

func setupErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSetup, fmt.Sprintf(format, args...))
}

// Options configure Run.
type Options struct {
	// Input is a directory (or store URL) of JSON-lines files that replaces
	// the spec's source; "" uses the spec's files source path.
	Input string
	// Checkpoint is the production checkpoint (default checkpoints/<name>).
	// It is only read: archived into the work directory when it exists.
	Checkpoint string
	// Workdir holds every drill's checkpoint and sink. "" makes a temporary
	// directory, removed afterwards unless Keep. A given one must be empty
	// or absent, and is kept.
	Workdir string
	Keep    bool
	// Scenarios to run, by name or number; empty runs all.
	Scenarios []string
	// Seed drives every random choice (the store faults, the receiver's
	// failures).
	Seed uint64
	// Registry opens the input and the production checkpoint. Required.
	Registry *gateway.Registry
	// BaseDir resolves relative paths of the spec and options (default:
	// the working directory).
	BaseDir string
	// FaultRate is the share of store requests that fail in store-faults
	// (default 0.10); MaxAttempts bounds its restarts (default 100).
	FaultRate   float64
	MaxAttempts int
	// BeforeReconcile, when set, runs on each drill's output just before
	// it is reconciled: the files sink's store, or nil for an http sink.
	// Tests use it to prove that reconciliation catches a loss or a
	// duplicate.
	BeforeReconcile func(ctx context.Context, scenario string, sink gateway.Store) error
	Logger          *slog.Logger
	// Progress, when set, is called before each step (the fault-free
	// "reference" run, then each scenario, by name) with the steps done and
	// their total, and once at the end with done == total and name "".
	Progress func(done, total int, name string)
}

// Scenario describes one drill.
type Scenario struct {
	Num     int
	Name    string
	Summary string
}

// Scenarios lists the drills in the order Run runs them.
func Scenarios() []Scenario {
	out := make([]Scenario, len(scenarios))
	for i, s := range scenarios {
		out[i] = Scenario{Num: i + 1, Name: s.name, Summary: s.summary}
	}
	return out
}

// selectScenarios resolves names and numbers.
func selectScenarios(sel []string) ([]int, error) {
	if len(sel) == 0 {
		out := make([]int, len(scenarios))
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	seen := map[int]bool{}
	var out []int
	for _, raw := range sel {
		for _, name := range strings.Split(raw, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			idx := -1
			if n, err := strconv.Atoi(name); err == nil && n >= 1 && n <= len(scenarios) {
				idx = n - 1
			}
			for i, s := range scenarios {
				if s.name == name {
					idx = i
				}
			}
			if idx < 0 {
				var names []string
				for i, s := range scenarios {
					names = append(names, fmt.Sprintf("%d %s", i+1, s.name))
				}
				return nil, setupErrorf("unknown scenario %q (known: %s)", name, strings.Join(names, ", "))
			}
			if !seen[idx] {
				seen[idx] = true
				out = append(out, idx)
			}
		}
	}
	return out, nil
}

// Run rehearses the query of s: it builds the reference, then runs each
// selected scenario on its own isolated checkpoint and sink.
func Run(ctx context.Context, s *spec.Spec, opts Options) (rep *Report, err error) {
	start := time.Now()
	if opts.Registry == nil {
		return nil, errors.New("rehearse: no store registry")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.FaultRate <= 0 {
		opts.FaultRate = 0.10
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 100
	}
	if opts.BaseDir == "" {
		if opts.BaseDir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	sel, err := selectScenarios(opts.Scenarios)
	if err != nil {
		return nil, err
	}
	r := &rehearsal{opts: opts, orig: s, log: opts.Logger}
	if err := r.isolate(ctx); err != nil {
		return nil, err
	}
	workdir, keep, err := openWorkdir(opts.Workdir, opts.BaseDir, opts.Keep, func(w string) error {
		r.workdir = w
		return r.checkApart()
	})
	if err != nil {
		return nil, err
	}
	defer removeWorkdir(workdir, keep, &err)
	rep = &Report{Spec: s.Name, Seed: opts.Seed, Workdir: workdir, Kept: keep, Input: gateway.Redact(r.input), Sink: s.Sink.Kind}
	if rep.Production, err = r.archiveProduction(ctx); err != nil {
		return nil, err
	}
	r.production = rep.Production
	progress := func(done int, name string) {
		if opts.Progress != nil {
			opts.Progress(done, len(sel)+1, name)
		}
	}
	progress(0, "reference")
	if r.ref, err = r.reference(ctx, r.input, r.files); err != nil {
		return nil, fmt.Errorf("reference run: %w", err)
	}
	rep.Reference = ReferenceStats{Files: len(r.files), Batches: len(r.ref.progress), RowsIn: r.ref.rowsIn,
		RowsOut: int64(len(r.ref.rows)), LateDropped: r.ref.late, StateRows: r.ref.stateRows}
	rep.OK = true
	for n, i := range sel {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sc := scenarios[i]
		progress(n+1, sc.name)
		res := r.runScenario(ctx, sc)
		rep.Scenarios = append(rep.Scenarios, res)
		rep.OK = rep.OK && res.OK
	}
	progress(len(sel)+1, "")
	rep.Duration = time.Since(start)
	return rep, nil
}

// makeWorkdir returns the work directory and whether it is a temporary one.
// openWorkdir makes the work directory (makeWorkdir) and hands it to
// check, which records it and checks it lies apart from production; a
// temporary one that fails the check is removed. keep says whether it
// stays after the run (a --workdir, or keepOpt).
func openWorkdir(dir, base string, keepOpt bool, check func(string) error) (workdir string, keep bool, err error) {
	workdir, temp, err := makeWorkdir(dir, base)
	if err != nil {
		return "", false, err
	}
	if err := check(workdir); err != nil {
		if temp {
			os.RemoveAll(workdir)
		}
		return "", false, err
	}
	return workdir, !temp || keepOpt, nil
}

// removeWorkdir removes workdir unless keep, reporting a failure into
// *err when the run had none (deferred by the run that made it).
func removeWorkdir(workdir string, keep bool, err *error) {
	if keep {
		return
	}
	if rerr := os.RemoveAll(workdir); rerr != nil && *err == nil {
		*err = fmt.Errorf("remove the work directory: %w", rerr)
	}
}

func makeWorkdir(dir, base string) (string, bool, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "ckgate-rehearse-")
		if err != nil {
			return "", false, setupErrorf("work directory: %v", err)
		}
		return d, true, nil
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(base, dir)
	}
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", false, setupErrorf("--workdir %s: %v", dir, err)
		}
	case err != nil:
		return "", false, setupErrorf("--workdir %s: %v", dir, err)
	case len(ents) > 0:
		return "", false, setupErrorf("--workdir %s is not empty (it holds %s): give an empty or new directory, so no drill mixes with an earlier one", dir, ents[0].Name())
	}
	return dir, false, nil
}

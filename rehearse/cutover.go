package rehearse

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/compat"
	"github.com/ckgate/ckgate/engine/operator"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/source"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/lifecycle"
)

// CutoverOptions configure Cutover. Of the embedded Options, Input,
// Checkpoint, Workdir, Keep, Registry, BaseDir, Logger and Progress apply.
type CutoverOptions struct {
	Options
	// FromBatch is the first batch both runs re-run (nil: the first batch
	// the checkpoint holds). The state is restored as of the batch before.
	FromBatch *int64
	// Interval, instead of FromBatch, picks the batches whose input holds
	// event times in it: from the first to the last such batch.
	Interval *Interval
	// RestartAt, when set, stops both runs after that batch and restarts
	// them from their checkpoints.
	RestartAt *int64
}

// Cutover rehearses a switch from the query of cur to the query of cand:
// on isolated copies of the production checkpoint (or, when there is none,
// of a baseline run of cur over the input), both re-run the same bounded
// input from the same restored state into isolated outputs, and their
// outputs are reconciled by business key. A candidate that cannot restore
// the state (compat calls a change not_allowed, or the engine refuses it)
// runs from empty state at the same boundary, as `ckgate fresh-start`
// would, and the report says it needs a new checkpoint.
func Cutover(ctx context.Context, cur, cand *spec.Spec, opts CutoverOptions) (rep *CutoverReport, err error) {
	start := time.Now()
	if opts.Registry == nil {
		return nil, errors.New("rehearse: no store registry")
	}
	if opts.Logger == nil {
		opts.Logger = slogDiscard()
	}
	if opts.BaseDir == "" {
		if opts.BaseDir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	if opts.FromBatch != nil && opts.Interval != nil {
		return nil, setupErrorf("give --from-batch or --interval, not both")
	}
	r := &rehearsal{opts: opts.Options, orig: cur, log: opts.Logger}
	if err := r.isolate(ctx); err != nil {
		return nil, err
	}
	// the candidate reads the same input (its own batch size)
	cs := *cand
	cs.Source = r.base.Source
	cs.Source.Path = r.input
	if cand.Source.MaxFilesPerBatch > 0 {
		cs.Source.MaxFilesPerBatch = cand.Source.MaxFilesPerBatch
	}
	copts := opts.Options
	copts.Input = ""
	rc := &rehearsal{opts: copts, orig: &cs, log: opts.Logger}
	if err := rc.isolate(ctx); err != nil {
		return nil, fmt.Errorf("candidate %s: %w", cand.Name, err)
	}
	workdir, keep, err := openWorkdir(opts.Workdir, opts.BaseDir, opts.Keep, func(w string) error {
		r.workdir, rc.workdir = w, w
		return r.checkApart()
	})
	if err != nil {
		return nil, err
	}
	defer removeWorkdir(workdir, keep, &err)
	rep = &CutoverReport{Spec: cur.Name, Candidate: cand.Name, Workdir: workdir, Kept: keep, Input: gateway.Redact(r.input),
		Sink: cur.Sink.Kind, Reasons: []string{}, Compat: []CompatChange{}, LateRows: []LateRow{}}
	progress := func(done int, name string) {
		if opts.Progress != nil {
			opts.Progress(done, 3, name)
		}
	}
	progress(0, "production")
	if rep.Production, err = r.archiveProduction(ctx); err != nil {
		return nil, err
	}
	srcDir := rep.Production.Archive
	if rep.Production.Found && srcDir != "" && opts.Input != "" {
		return nil, setupErrorf("--input cannot stand in for the input of the production checkpoint %s: its offsets name the files of its own source; give the spec's source", rep.Production.Checkpoint)
	}
	if srcDir == "" {
		if srcDir, err = r.baseline(ctx); err != nil {
			return nil, fmt.Errorf("baseline run of the current spec: %w", err)
		}
		rep.Baseline = true
	}
	src, err := newDirStore(srcDir)
	if err != nil {
		return nil, err
	}
	defer gateway.Close(src)
	batches, err := readBatches(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("the checkpoint to rehearse from (%s): %w", srcDir, err)
	}
	if len(batches) == 0 {
		return nil, setupErrorf("the checkpoint %s holds no committed batch: nothing to rehearse from", rep.Production.Checkpoint)
	}
	from, to, err := r.batchRange(batches, opts)
	if err != nil {
		return nil, err
	}
	if k := opts.RestartAt; k != nil && (*k < from || *k >= to) {
		return nil, setupErrorf("--restart-at %d: want a batch from %d to %d (the rehearsed range is %d-%d, and the restart needs a batch after it)", *k, from, to-1, from, to)
	}
	allowed := map[string]bool{}
	bd := Boundary{FromBatch: from, ToBatch: to, RestartAt: opts.RestartAt}
	if opts.Interval != nil {
		bd.Interval = opts.Interval.String()
	}
	for _, b := range batches {
		if b.ID <= to {
			for _, p := range b.Files {
				allowed[inputKey(r.input, p)] = true
			}
		}
		if b.ID >= from && b.ID <= to {
			bd.Files += len(b.Files)
		}
	}
	if bd.StateRows, bd.StateBytes, err = stateAt(ctx, src, from-1); err != nil {
		return nil, err
	}
	rep.Boundary = bd

	needsNew, why, err := classify(cur, cand, opts.BaseDir, rep)
	if err != nil {
		return nil, err
	}
	run := cutoverRun{src: src, batches: batches, from: from, restartAt: opts.RestartAt, allowed: allowed, before: bd}
	progress(1, "current")
	curRun, err := run.side(ctx, r, "current", false)
	if err != nil {
		if errors.Is(err, engine.ErrIncompatible) {
			return nil, setupErrorf("the current spec cannot restore the checkpoint it is said to run on (%s): %v", rep.Production.Checkpoint, err)
		}
		return nil, fmt.Errorf("current run: %w", err)
	}
	defer curRun.d.close()
	progress(2, "candidate")
	var candRun *sideRun
	if !needsNew {
		candRun, err = run.side(ctx, rc, "candidate", false)
		if errors.Is(err, engine.ErrIncompatible) {
			needsNew, why = true, "the engine refuses to restore it: "+err.Error()
		} else if err != nil {
			return nil, fmt.Errorf("candidate run: %w", err)
		}
	}
	if needsNew {
		if candRun != nil {
			candRun.d.close()
		}
		if candRun, err = run.side(ctx, rc, "candidate-fresh", true); err != nil {
			return nil, fmt.Errorf("candidate run from empty state at batch %d: %w", from, err)
		}
	}
	defer candRun.d.close()
	rep.Current, rep.Cand = curRun.stats, candRun.stats
	rep.NeedsNewCheckpoint = needsNew

	keyCols := r.keyCols
	if !slices.Equal(keyCols, rc.keyCols) {
		keyCols = nil
	}
	var dupCur, dupCand int64
	if rep.Reconcile, dupCur, dupCand, err = ReconcileCutover(curRun.rows, candRun.rows, keyCols); err != nil {
		return nil, err
	}
	rep.Current.Duplicates, rep.Cand.Duplicates = dupCur, dupCand
	if err := r.lateRows(ctx, rc, curRun, candRun, rep); err != nil {
		return nil, err
	}
	r.verdict(rep, why)
	progress(3, "")
	rep.Duration = time.Since(start)
	return rep, nil
}

// classify asks compat whether the candidate may restore the state of the
// current spec; it fills rep.Compat and says why not.
func classify(cur, cand *spec.Spec, base string, rep *CutoverReport) (bool, string, error) {
	cp, err := compat.FromSpec(cur, compat.SpecOptions{BaseDir: base})
	if err != nil {
		return false, "", setupErrorf("current spec: %v", err)
	}
	np, err := compat.FromSpec(cand, compat.SpecOptions{BaseDir: base})
	if err != nil {
		return false, "", setupErrorf("candidate spec: %v", err)
	}
	res := compat.Compare(&compat.Recorded{Plan: cp, Writer: compat.WriterCkgate}, np)
	var why []string
	for _, ch := range res.Changes {
		rep.Compat = append(rep.Compat, CompatChange{Rule: ch.Rule, Field: ch.Field, Current: ch.Recorded, Proposed: ch.Proposed,
			Class: string(ch.Class), Reason: ch.Reason})
		if ch.Class == compat.NotAllowed {
			why = append(why, fmt.Sprintf("compat: %s %s → %s is not_allowed (%s)", ch.Field, ch.Recorded, ch.Proposed, ch.Reason))
		}
	}
	return !res.Compatible, strings.Join(why, "; "), nil
}

// batchRange resolves --from-batch or --interval into the batches to
// re-run (from..to, ids of committed batches).
func (r *rehearsal) batchRange(batches []logBatch, opts CutoverOptions) (from, to int64, err error) {
	first, last := batches[0].ID, batches[len(batches)-1].ID
	// re-running batch n restores the state of commits/n-1: the earliest
	// batch that can be re-run is 0, or the one after the first held
	lowest := first
	if first > 0 {
		lowest = first + 1
	}
	if lowest > last {
		return 0, 0, setupErrorf("the checkpoint holds only batch %d (earlier ones were purged): no batch can be re-run from a restored state", first)
	}
	switch {
	case opts.FromBatch != nil:
		from, to = *opts.FromBatch, last
		if from < lowest || from > last {
			return 0, 0, setupErrorf("--from-batch %d: the checkpoint holds committed batches %d-%d; a re-run needs the commit before it, so the range is %d-%d", from, first, last, lowest, last)
		}
		return from, to, nil
	case opts.Interval != nil:
		iv := *opts.Interval
		data := map[string][]byte{}
		for _, f := range r.files {
			data[f.Key] = f.Data
		}
		tf := row.NewField(r.base.EventTime)
		from, to = -1, -1
		for _, b := range batches {
			hit := false
			for _, p := range b.Files {
				_ = lines(data[inputKey(r.input, p)], func(l []byte) error {
					if rw, err := row.ParseJSON(l); err == nil {
						if ts, ok := operator.EventTime(tf.Get(&rw)); ok && ts >= iv.Start && ts < iv.End {
							hit = true
						}
					}
					return nil
				})
			}
			if hit {
				if from < 0 {
					from = b.ID
				}
				to = b.ID
			}
		}
		if r.base.EventTime == "" {
			return 0, 0, setupErrorf("--interval: the spec has no event_time")
		}
		if from < 0 {
			return 0, 0, setupErrorf("--interval %s: no committed batch (%d-%d) read an event in it", iv, first, last)
		}
		if from < lowest {
			return 0, 0, setupErrorf("--interval %s starts in batch %d, but the checkpoint holds batches from %d: a re-run needs the commit before it (the earliest is %d)", iv, from, first, lowest)
		}
		return from, to, nil
	}
	return lowest, last, nil
}

// baseline runs the current spec fault-free over the whole input on an
// isolated checkpoint, to stand in for a production checkpoint that does
// not exist; it returns the checkpoint directory.
func (r *rehearsal) baseline(ctx context.Context) (string, error) {
	d, err := r.newDrill("baseline", r.input, 0)
	if err != nil {
		return "", err
	}
	defer d.close()
	q, pid, err := d.open(ctx, nil, gateway.Refuse, nil)
	if err != nil {
		return "", err
	}
	err = d.run(ctx, q, 0)
	if cerr := q.Close(ctx); err == nil {
		err = cerr
	}
	d.kill(nil, pid)
	return d.cpDir, err
}

// cutoverRun is what both runs share: the checkpoint they restore from,
// its batches, the boundary and the bounded input.
type cutoverRun struct {
	src       gateway.Store
	batches   []logBatch
	from      int64
	restartAt *int64
	allowed   map[string]bool
	before    Boundary
}

// sideRun is one finished run.
type sideRun struct {
	d     *drill
	rows  []string
	stats RunStats
	first int64 // the first batch id the run ran
}

// side runs one spec (rr's) over the bounded input: restored from a copy
// of the checkpoint truncated at the boundary, or, fresh, from empty
// state at the boundary as `ckgate fresh-start` starts a new root.
func (c *cutoverRun) side(ctx context.Context, rr *rehearsal, name string, fresh bool) (*sideRun, error) {
	d, err := rr.newDrill(name, rr.input, 0)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			d.close()
		}
	}()
	allowed := c.allowed
	d.view = func(s gateway.Store) gateway.Store { return boundedInput(s, allowed) }
	sr := &sideRun{d: d, stats: RunStats{Restored: !fresh, Checkpoint: d.cpDir}}
	principal := lifecycle.Principal{ID: "ckgate-rehearse", Kind: "housekeeping"}
	mode := gateway.Force // the copy holds the production writer record
	if !fresh {
		if _, err := lifecycle.Archive(ctx, c.src, d.cp, lifecycle.ArchiveOptions{Source: "rehearsal copy", Dest: d.cpDir,
			Principal: principal, Reason: "ckgate rehearse --candidate: isolated copy", AllowLiveWriter: true}); err != nil {
			return nil, fmt.Errorf("copy the checkpoint: %w", err)
		}
		if err := truncateAt(ctx, d.cp, c.batches, c.from); err != nil {
			return nil, err
		}
		if err := redirectPlanSink(ctx, d.cp, d.spec); err != nil {
			return nil, err
		}
		sr.first = c.from
		sr.stats.StateRowsBefore, sr.stats.StateBytesBefore = c.before.StateRows, c.before.StateBytes
	} else if c.from > c.batches[0].ID || c.from > 0 {
		// as fresh-start: the files of the batches before the boundary are
		// carried over as processed, the state is not
		copyDir := filepath.Join(d.dir, "old-root")
		old, err := d.dirStore(copyDir)
		if err != nil {
			return nil, err
		}
		if _, err := lifecycle.Archive(ctx, c.src, old, lifecycle.ArchiveOptions{Source: "rehearsal copy", Dest: copyDir,
			Principal: principal, Reason: "ckgate rehearse --candidate: isolated copy", AllowLiveWriter: true}); err != nil {
			return nil, fmt.Errorf("copy the checkpoint: %w", err)
		}
		b := c.from - 1
		fs, err := lifecycle.FilesBoundary(ctx, old, lifecycle.FilesFrom{Batch: &b}, nil)
		if err != nil {
			return nil, fmt.Errorf("boundary at batch %d: %w", c.from, err)
		}
		archDir := filepath.Join(d.dir, "old-root-archive")
		arch, err := d.dirStore(archDir)
		if err != nil {
			return nil, err
		}
		if _, err := lifecycle.FreshStart(ctx, old, arch, d.cp, lifecycle.FreshStartOptions{Source: copyDir, Dest: archDir, NewRoot: d.cpDir,
			Start: source.StartPoint{Files: fs}, Principal: principal, Reason: "ckgate rehearse --candidate: the candidate cannot restore the current state",
			AllowLiveWriter: true}); err != nil {
			return nil, fmt.Errorf("fresh start at batch %d: %w", c.from, err)
		}
		mode = gateway.Refuse
		sr.stats.Note = fmt.Sprintf("fresh start at batch %d: the files of batches before it are carried over as processed, their state is not", c.from)
	} else {
		mode = gateway.Refuse
		sr.stats.Note = "fresh start at batch 0: empty state, as the current run"
	}
	stopAfter := int64(-1)
	if c.restartAt != nil {
		stopAfter = *c.restartAt - c.from + sr.first
	}
	q, pid, err := d.open(ctx, nil, mode, nil)
	if err != nil {
		return nil, err
	}
	if stopAfter >= 0 {
		for {
			p, did, err := d.step(ctx, q)
			if err != nil {
				d.kill(q, pid)
				return nil, err
			}
			if !did || p.BatchID >= stopAfter {
				break
			}
		}
		d.kill(q, pid) // stopped after batch K: restart from the checkpoint
		sr.stats.Restarts++
		if q, pid, err = d.open(ctx, nil, gateway.Refuse, nil); err != nil {
			return nil, fmt.Errorf("restart after batch %d: %w", *c.restartAt, err)
		}
	}
	err = d.run(ctx, q, 0)
	if cerr := q.Close(ctx); err == nil {
		err = cerr
	}
	d.kill(nil, pid)
	if err != nil {
		return nil, err
	}
	if d.recv != nil {
		sr.rows = d.recv.Rows()
	} else {
		sr.rows, err = readRunOutput(ctx, d.sink)
	}
	if err != nil {
		return nil, fmt.Errorf("read the %s output: %w", name, err)
	}
	sum := sha256.Sum256([]byte(strings.Join(sr.rows, "\n")))
	sr.stats.OutputSHA256 = hex.EncodeToString(sum[:])
	sr.stats.RowsOut = int64(len(sr.rows))
	if d.sink != nil {
		sr.stats.Output = filepath.Join(d.dir, "sink")
	} else if d.recv != nil {
		sr.stats.Output = d.recv.URL
	}
	d.mu.Lock()
	latest := int64(-1)
	for id, p := range d.last {
		sr.stats.Batches++
		sr.stats.RowsIn += p.NumInputRows
		sr.stats.LateDropped += p.Ckgate.LateRowsDropped
		latest = max(latest, id)
	}
	d.mu.Unlock()
	if sr.stats.StateRowsAfter, sr.stats.StateBytesAfter, err = stateAt(ctx, d.cp, latest); err != nil {
		return nil, err
	}
	ok = true
	return sr, nil
}

// verdict fills the verdict and its reasons.
func (r *rehearsal) verdict(rep *CutoverReport, why string) {
	add := func(format string, args ...any) { rep.Reasons = append(rep.Reasons, fmt.Sprintf(format, args...)) }
	if rep.NeedsNewCheckpoint {
		add("candidate cannot restore this state: needs a new checkpoint (%s); it ran from empty state at batch %d, as `ckgate fresh-start` would", why, rep.Boundary.FromBatch)
		var keys []string
		for _, d := range rep.Reconcile.Rows {
			if d.Side != "only_candidate" && len(keys) < 3 {
				k := d.Key
				if !strings.HasPrefix(k, "{") {
					k = "{" + k + "}"
				}
				keys = append(keys, k)
			}
		}
		rep.Loses = fmt.Sprintf("the state built from the input before batch %d (%d state rows, %s): windows, sessions or keys open at the boundary start again from the candidate's first row",
			rep.Boundary.FromBatch, rep.Boundary.StateRows, bytesText(rep.Boundary.StateBytes))
		if len(keys) > 0 {
			rep.Loses += fmt.Sprintf("; rows of the current output the candidate does not reproduce: %d (e.g. %s)",
				rep.Reconcile.OnlyCurrent+rep.Reconcile.Changed, strings.Join(keys, ", "))
		}
	}
	if !rep.Reconcile.Same() {
		add("outputs differ %s", rep.Reconcile)
	}
	if n := len(rep.LateRows); n > 0 || rep.Current.LateDropped != rep.Cand.LateDropped {
		add("late rows handled differently: current dropped %d, candidate %d (%d rows named)", rep.Current.LateDropped, rep.Cand.LateDropped, n)
	}
	if rep.Current.Duplicates != rep.Cand.Duplicates {
		add("duplicates by business key: current %d, candidate %d", rep.Current.Duplicates, rep.Cand.Duplicates)
	}
	if rep.Current.StateRowsAfter != rep.Cand.StateRowsAfter {
		add("state rows at the end: current %d, candidate %d", rep.Current.StateRowsAfter, rep.Cand.StateRowsAfter)
	}
	rep.Verdict = VerdictSame
	if len(rep.Reasons) > 0 {
		rep.Verdict = VerdictDiffers
	}
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

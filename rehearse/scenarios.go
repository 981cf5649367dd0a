package rehearse

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/sink"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/lifecycle"
)

// scenario is one drill: run returns its result (OK false on any finding).
type scenario struct {
	name, summary string
	run           func(ctx context.Context, r *rehearsal, res *Result) (notes, failures []string, d *drill, ref *refRun, err error)
	// ownVerdict: the drill is judged by its failures alone (it stops at
	// a refused restart, so there is nothing to reconcile)
	ownVerdict bool
}

var scenarios = []scenario{
	{"crash-after-offsets", "the process dies right after writing offsets/N, before the sink sees batch N; the restart must re-run N with the same offsets", crashAfterOffsets, false},
	{"crash-after-sink-write", "the sink wrote batch N's data but not its manifest (files) or ledger entry (http); the restart must not publish it twice", crashAfterSinkWrite, false},
	{"crash-before-commit", "the sink committed batch N but commits/N was never written (committed but not reported); the re-run must find the sink done", crashBeforeCommit, false},
	{"stale-checkpoint", "restart from an older archived copy of the checkpoint while the sink holds newer batches; nothing may be duplicated", staleCheckpoint, false},
	{"late-events", "extra input with rows inside the watermark delay, at and beyond it, and duplicates, with a crash in that batch; late drops must match the reference", lateEvents, false},
	{"second-writer", "a second writer on the same checkpoint is refused; a forced one fences the first, which stops cleanly; the survivor finishes", secondWriter, false},
	{"store-faults", "10% of store requests (--fault-rate) fail, fail after writing (ambiguous) or time out; the query is restarted until it completes", storeFaults, false},
	{"source-table-replaced", "the query reads a Delta table of the input; the table is replaced at the same path (a new table id, as CREATE OR REPLACE); the restart must be refused, naming both ids", sourceTableReplaced, true},
	{"source-files-vacuumed", "the query reads a Delta table of the input; the data files it has not read yet are vacuumed; the restart must report the gap, skipping nothing silently", sourceFilesVacuumed, true},
}

// runScenario runs one drill and turns an unexpected error into a failed
// result.
func (r *rehearsal) runScenario(ctx context.Context, sc scenario) Result {
	res := Result{Name: sc.name}
	start := time.Now()
	notes, failures, d, ref, err := sc.run(ctx, r, &res)
	if d != nil {
		defer d.close()
	}
	if err != nil {
		failures = append(failures, err.Error())
	}
	switch {
	case sc.ownVerdict && err == nil:
		res.OK = len(failures) == 0
		res.Detail = strings.Join(append(failures, notes...), "; ")
	case d != nil && ref != nil && err == nil:
		d.finish(ctx, ref, &res, notes, failures)
	default:
		res.OK = false
		res.Detail = strings.Join(append(failures, notes...), "; ")
	}
	r.log.Info("rehearse scenario", "name", sc.name, "ok", res.OK, "took", time.Since(start).Round(time.Millisecond))
	return res
}

// crashRun runs a fresh drill with fault until it crashes, checks the
// crash point with atCrash, restarts and runs to the end.
func (r *rehearsal) crashRun(ctx context.Context, d *drill, f gateway.Fault, batch int64, res *Result,
	atCrash func() []string) (notes, failures []string, err error) {
	faults := gateway.NewFaults(f)
	q, pid, err := d.open(ctx, faults, gateway.Refuse, nil)
	if err != nil {
		return nil, nil, err
	}
	runErr := d.run(ctx, q, 0)
	d.kill(q, pid)
	if !faults.Crashed() {
		return nil, []string{fmt.Sprintf("not exercised: the fault (%s %s…) never fired (run: %v)", f.Action, f.Prefix, runErr)}, nil
	}
	if !errors.Is(runErr, gateway.ErrCrashed) {
		failures = append(failures, fmt.Sprintf("the crashed run ended with %v, want the injected crash", runErr))
	}
	if batch > 0 {
		res.StateRowsBefore = d.stateRows(batch - 1)
	}
	failures = append(failures, atCrash()...)
	q, pid, err = d.open(ctx, nil, gateway.Refuse, nil)
	if err != nil {
		return notes, failures, fmt.Errorf("restart after the crash: %w", err)
	}
	rs := q.Restored()
	failures = append(failures, want(rs.RerunBatch == batch, "after the crash in batch %d the restart found batch %d to re-run (last commit %d)", batch, rs.RerunBatch, rs.LastCommitted)...)
	if rs.RerunBatch >= 0 {
		notes = append(notes, fmt.Sprintf("crashed in batch %d; the restart re-ran batch %d from the log", batch, rs.RerunBatch))
	} else {
		notes = append(notes, fmt.Sprintf("crashed in batch %d; the restart resumed after batch %d", batch, rs.LastCommitted))
	}
	err = d.run(ctx, q, 0)
	if cerr := q.Close(ctx); err == nil {
		err = cerr
	}
	d.kill(nil, pid)
	if err != nil {
		return notes, failures, fmt.Errorf("restart after the crash: %w", err)
	}
	d.mu.Lock()
	p, ok := d.last[batch]
	d.mu.Unlock()
	if ok && p.Sink.Skipped {
		notes = append(notes, fmt.Sprintf("the re-run of batch %d found it committed in the sink and skipped it", batch))
	}
	return notes, failures, nil
}

// want returns a failure message unless ok.
func want(ok bool, format string, args ...any) []string {
	if ok {
		return nil
	}
	return []string{fmt.Sprintf(format, args...)}
}

func crashAfterOffsets(ctx context.Context, r *rehearsal, res *Result) ([]string, []string, *drill, *refRun, error) {
	d, err := r.newDrill("crash-after-offsets", r.input, 0)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	n, _ := r.ref.outputBatch()
	f := gateway.Fault{Op: gateway.OpPut, Prefix: checkpoint.OffsetsKey(n), Nth: 1, Action: gateway.CrashAfter}
	notes, failures, err := r.crashRun(ctx, d, f, n, res, func() []string {
		var out []string
		ok, err := exists(ctx, d.cp, checkpoint.OffsetsKey(n))
		out = append(out, want(ok && err == nil, "offsets/%d was not written before the crash (%v)", n, err)...)
		ok, _ = exists(ctx, d.cp, checkpoint.CommitKey(n))
		out = append(out, want(!ok, "commits/%d exists after a crash right after offsets/%d", n, n)...)
		if d.sink != nil {
			ok, _ = exists(ctx, d.sink, fmt.Sprintf("%s/%d", checkpoint.SinkMetadataDir, n))
			out = append(out, want(!ok, "the sink committed batch %d before the crash", n)...)
		}
		return out
	})
	return notes, failures, d, r.ref, err
}

func crashAfterSinkWrite(ctx context.Context, r *rehearsal, res *Result) ([]string, []string, *drill, *refRun, error) {
	d, err := r.newDrill("crash-after-sink-write", r.input, 0)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	n, rows := r.ref.outputBatch()
	if rows == 0 {
		return []string{"not exercised: no batch after batch 0 has output"}, nil, d, nil, nil
	}
	var f gateway.Fault
	var what string
	if d.sink != nil {
		// the data file lands, the process dies before the manifest
		f = gateway.Fault{Op: gateway.OpPut, Prefix: fmt.Sprintf("part-%05d-", n), Nth: 1, Action: gateway.CrashAfter}
		what = "data file written, manifest not"
	} else {
		// the receiver applied the first chunk, the process dies before the ledger entry
		f = gateway.Fault{Op: gateway.OpPut, Prefix: fmt.Sprintf("%s/%d/", sink.EffectsDir, n), Nth: 1, Action: gateway.Crash}
		what = "records delivered, ledger entry not written"
	}
	notes, failures, err := r.crashRun(ctx, d, f, n, res, func() []string {
		if d.sink != nil {
			ok, _ := exists(ctx, d.sink, fmt.Sprintf("%s/%d", checkpoint.SinkMetadataDir, n))
			files := 0
			for a, err := range d.sink.List(ctx, fmt.Sprintf("part-%05d-", n)) {
				if err == nil && a.Key != "" {
					files++
				}
			}
			return append(want(!ok, "the manifest of batch %d exists after the crash", n), want(files == 1, "%d data files of batch %d after the crash, want 1", files, n)...)
		}
		applied := d.recv.batchEffects(n)
		ok, _ := exists(ctx, d.cp, sink.LedgerKey(n, 0))
		return append(want(applied > 0, "the receiver got nothing of batch %d before the crash", n), want(!ok, "the ledger entry of batch %d exists after the crash", n)...)
	})
	return append([]string{what}, notes...), failures, d, r.ref, err
}

func crashBeforeCommit(ctx context.Context, r *rehearsal, res *Result) ([]string, []string, *drill, *refRun, error) {
	d, err := r.newDrill("crash-before-commit", r.input, 0)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	n, _ := r.ref.outputBatch()
	f := gateway.Fault{Op: gateway.OpPut, Prefix: checkpoint.CommitKey(n), Nth: 1, Action: gateway.Crash}
	notes, failures, err := r.crashRun(ctx, d, f, n, res, func() []string {
		var out []string
		ok, _ := exists(ctx, d.cp, checkpoint.CommitKey(n))
		out = append(out, want(!ok, "commits/%d exists after the crash", n)...)
		if d.sink != nil {
			ok, _ = exists(ctx, d.sink, fmt.Sprintf("%s/%d", checkpoint.SinkMetadataDir, n))
			if !ok {
				ok, _ = exists(ctx, d.sink, fmt.Sprintf("%s/%d.compact", checkpoint.SinkMetadataDir, n))
			}
			out = append(out, want(ok, "the sink had not committed batch %d when the process died", n)...)
		}
		return out
	})
	return notes, failures, d, r.ref, err
}

func staleCheckpoint(ctx context.Context, r *rehearsal, res *Result) ([]string, []string, *drill, *refRun, error) {
	d, err := r.newDrill("stale-checkpoint", r.input, 0)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	total := len(r.ref.progress)
	if total < 2 {
		return []string{"not exercised: the query runs a single batch"}, nil, d, nil, nil
	}
	k := max(1, total/2)
	q, pid, err := d.open(ctx, nil, gateway.Refuse, nil)
	if err != nil {
		return nil, nil, d, nil, err
	}
	err = d.run(ctx, q, k)
	if cerr := q.Close(ctx); err == nil {
		err = cerr
	}
	d.kill(nil, pid)
	if err != nil {
		return nil, nil, d, nil, err
	}
	res.StateRowsBefore = d.stateRows(int64(k - 1))
	archiveDir := filepath.Join(d.dir, "archive-after-batch-"+fmt.Sprint(k-1))
	arch, err := d.dirStore(archiveDir)
	if err != nil {
		return nil, nil, d, nil, err
	}
	if _, err := lifecycle.Archive(ctx, d.cp, arch, lifecycle.ArchiveOptions{Source: d.cpDir, Dest: archiveDir,
		Principal: lifecycle.Principal{ID: "ckgate-rehearse", Kind: "housekeeping"}, Reason: "ckgate rehearse stale-checkpoint"}); err != nil {
		return nil, nil, d, nil, fmt.Errorf("archive after batch %d: %w", k-1, err)
	}
	// the query goes on to the end: the sink holds every batch
	if q, pid, err = d.open(ctx, nil, gateway.Refuse, nil); err != nil {
		return nil, nil, d, nil, err
	}
	err = d.run(ctx, q, 0)
	if cerr := q.Close(ctx); err == nil {
		err = cerr
	}
	d.kill(nil, pid)
	if err != nil {
		return nil, nil, d, nil, err
	}
	latest := int64(-1)
	for b := range d.last {
		latest = max(latest, b)
	}
	// restore the stale archive into a new root and restart from it
	restoredDir := filepath.Join(d.dir, "checkpoint-restored")
	restored, err := d.dirStore(restoredDir)
	if err != nil {
		return nil, nil, d, nil, err
	}
	if _, err := lifecycle.Archive(ctx, arch, restored, lifecycle.ArchiveOptions{Source: archiveDir, Dest: restoredDir,
		Principal: lifecycle.Principal{ID: "ckgate-rehearse", Kind: "housekeeping"}, Reason: "ckgate rehearse: restore a stale copy"}); err != nil {
		return nil, nil, d, nil, fmt.Errorf("restore the archive: %w", err)
	}
	d.cp, d.cpDir = restored, restoredDir
	if q, pid, err = d.open(ctx, nil, gateway.Refuse, nil); err != nil {
		return nil, nil, d, nil, fmt.Errorf("restart from the stale copy: %w", err)
	}
	rs := q.Restored()
	rerunFrom := rs.LastCommitted + 1
	var skipped []int64
	err = q.Run(ctx, engine.Trigger{AvailableNow: true}, func(p engine.Progress) {
		d.record(p)
		if p.Sink.Skipped {
			skipped = append(skipped, p.BatchID)
		}
	})
	if cerr := q.Close(ctx); err == nil {
		err = cerr
	}
	d.kill(nil, pid)
	if err != nil {
		return nil, nil, d, nil, fmt.Errorf("run from the stale copy: %w", err)
	}
	notes := []string{fmt.Sprintf("archived after batch %d, ran on to batch %d, restored the archive and restarted: batches %d-%d re-ran against a sink that had them",
		k-1, latest, rerunFrom, latest)}
	var failures []string
	if d.sink != nil {
		var withRows []int64
		for _, p := range r.ref.progress {
			if p.BatchID >= rerunFrom && p.Sink.NumOutputRows > 0 && !slices.Contains(skipped, p.BatchID) {
				withRows = append(withRows, p.BatchID)
			}
		}
		failures = want(len(withRows) == 0, "re-run batches %v were written to the sink again", withRows)
		notes = append(notes, fmt.Sprintf("%d re-run batches skipped by the sink's manifest", len(skipped)))
	} else {
		notes = append(notes, "the http sink's ledger lives in the checkpoint, so the stale copy re-sent those batches: only the receiver's de-duplication by idempotency key kept them from being applied twice")
	}
	if r.production.Found {
		notes = append(notes, "the production checkpoint was archived read-only to "+r.production.Archive+"; the stale copy is the drill's own, as the production one belongs to the production sink, which rehearse never opens")
	}
	return notes, failures, d, r.ref, nil
}

func lateEvents(ctx context.Context, r *rehearsal, res *Result) ([]string, []string, *drill, *refRun, error) {
	li, err := buildLateInput(r.base, r.files)
	if err != nil {
		return nil, []string{"not exercised: " + err.Error()}, nil, nil, nil
	}
	dir := filepath.Join(r.workdir, "late-events", "input")
	if err := writeInput(dir, li.Files); err != nil {
		return nil, nil, nil, nil, err
	}
	u, err := gateway.ParseURL(dir)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	ref, err := r.reference(ctx, u.String(), li.Files)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("reference over the late input: %w", err)
	}
	d, err := r.newDrill("late-events", u.String(), 0)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	b, ok := ref.batchReading(li.Chunk)
	if !ok {
		return nil, []string{fmt.Sprintf("no batch of the reference read chunk %d", li.Chunk)}, d, nil, nil
	}
	f := gateway.Fault{Op: gateway.OpPut, Prefix: checkpoint.CommitKey(b), Nth: 1, Action: gateway.Crash}
	notes, failures, err := r.crashRun(ctx, d, f, b, res, func() []string { return nil })
	if li.Inside+li.Beyond == 0 {
		notes = append([]string{fmt.Sprintf("the query has no watermark (operator %s): injected %s into batch %d with %d exact duplicates only", r.base.Operator.Kind, filepath.Base(li.Key), b, li.Copies)}, notes...)
	} else {
		notes = append([]string{fmt.Sprintf("injected %s into batch %d: %d rows inside the watermark delay, %d at or beyond the watermark, %d exact duplicates; the reference dropped %d late rows (%d of the original input), %d late rows accepted within the delay",
			filepath.Base(li.Key), b, li.Inside, li.Beyond, li.Copies, ref.late, r.ref.late, ref.plan.LateAccepted)}, notes...)
	}
	if ref.late < r.ref.late+int64(li.Beyond) {
		failures = append(failures, fmt.Sprintf("the reference dropped %d late rows, want at least %d (%d original + %d injected beyond the watermark)",
			ref.late, r.ref.late+int64(li.Beyond), r.ref.late, li.Beyond))
	}
	return notes, failures, d, ref, err
}

func secondWriter(ctx context.Context, r *rehearsal, res *Result) ([]string, []string, *drill, *refRun, error) {
	d, err := r.newDrill("second-writer", r.input, 0)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var notes, failures []string
	var armed atomic.Value // the key whose write triggers the forced take-over
	var forced *engine.Query
	var forcedPID int
	var forcedErr error
	hook := func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
		if k, _ := armed.Load().(string); k != "" && c.Op == gateway.OpPut && c.Key == k {
			armed.Store("")
			// the second writer forces its way in between the first's writer
			// check and its offsets write: the first becomes a zombie
			forced, forcedPID, forcedErr = d.open(ctx, nil, gateway.Force, nil)
		}
		return next(ctx)
	}
	a, apid, err := d.open(ctx, nil, gateway.Refuse, hook)
	if err != nil {
		return nil, nil, d, nil, err
	}
	defer func() { d.kill(a, apid) }()
	p, did, err := d.step(ctx, a)
	if err != nil || !did {
		return nil, nil, d, nil, fmt.Errorf("writer 1's first batch: ran %v, %v", did, err)
	}
	// a second writer that does not force is refused
	if b, bpid, err := d.open(ctx, nil, gateway.Refuse, nil); err == nil {
		failures = append(failures, "a second writer opened the checkpoint while the first was live")
		d.kill(b, bpid)
	} else if !errors.Is(err, gateway.ErrInUse) {
		failures = append(failures, fmt.Sprintf("the second writer failed with %v, want in use", err))
	} else {
		notes = append(notes, "a second writer was refused (in use)")
	}
	// the first keeps going
	if p, did, err = d.step(ctx, a); err != nil || !did {
		return notes, append(failures, fmt.Sprintf("writer 1 after the refusal: ran %v, %v", did, err)), d, nil, nil
	}
	res.StateRowsBefore = stateRows(p)
	zombie := p.BatchID + 1
	armed.Store(checkpoint.OffsetsKey(zombie))
	zp, zdid, zerr := d.step(ctx, a)
	if forcedErr != nil {
		return notes, append(failures, fmt.Sprintf("the forced second writer: %v", forcedErr)), d, nil, nil
	}
	if forced == nil {
		return append(notes, "not exercised: the source ran dry before the take-over"), failures, d, nil, nil
	}
	defer func() { d.kill(forced, forcedPID) }()
	switch {
	case zerr != nil && !errors.Is(zerr, gateway.ErrFenced):
		failures = append(failures, fmt.Sprintf("writer 1's batch during the take-over: %v", zerr))
	case zerr != nil:
		notes = append(notes, fmt.Sprintf("writer 1 was fenced in batch %d", zombie))
	case zdid:
		notes = append(notes, fmt.Sprintf("writer 1 finished batch %d as a zombie (epoch %d)", zp.BatchID, zp.Ckgate.Epoch))
	}
	// the fenced writer stops without writing anything
	cpBefore, _ := countKeys(d.cpDir)
	sinkBefore, _ := countKeys(filepath.Join(d.dir, "sink"))
	_, did, err = a.RunBatch(ctx)
	cpAfter, _ := countKeys(d.cpDir)
	sinkAfter, _ := countKeys(filepath.Join(d.dir, "sink"))
	switch {
	case !errors.Is(err, gateway.ErrFenced) || did:
		failures = append(failures, fmt.Sprintf("writer 1 after the take-over: ran %v, %v; want fenced", did, err))
	case cpAfter != cpBefore || sinkAfter != sinkBefore:
		failures = append(failures, fmt.Sprintf("the fenced writer 1 wrote: checkpoint %d→%d keys, sink %d→%d", cpBefore, cpAfter, sinkBefore, sinkAfter))
	default:
		notes = append(notes, "then stopped fenced without writing")
	}
	d.kill(a, apid)
	// the survivor finishes
	var first *engine.Progress
	err = forced.Run(ctx, engine.Trigger{AvailableNow: true}, func(p engine.Progress) {
		d.record(p)
		if first == nil {
			first = &p
		}
	})
	if cerr := forced.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return notes, failures, d, nil, fmt.Errorf("the second writer's run: %w", err)
	}
	if first != nil && (first.Ckgate.AdoptedOffsets || first.Ckgate.AdoptedCommit || first.Sink.Skipped) {
		notes = append(notes, fmt.Sprintf("writer 2 (epoch %d) adopted batch %d's log entries and found its sink commit", first.Ckgate.Epoch, first.BatchID))
	}
	return notes, failures, d, r.ref, nil
}

func storeFaults(ctx context.Context, r *rehearsal, res *Result) ([]string, []string, *drill, *refRun, error) {
	rate := r.opts.FaultRate
	recvFail := 0.0
	if r.base.Sink.Kind == spec.SinkHTTP {
		recvFail = rate
	}
	d, err := r.newDrill("store-faults", r.input, recvFail)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	d.retry = 3
	faults := gateway.NewSeededFaults(r.opts.Seed, gateway.Fault{Probability: rate,
		OneOf: []gateway.FaultAction{gateway.FailBefore, gateway.FailAfter, gateway.Timeout}, Delay: 2 * time.Millisecond})
	var failures []string
	attempts, done := 0, false
	errs := map[string]int{}
	for attempts < r.opts.MaxAttempts && !done {
		attempts++
		q, pid, err := d.open(ctx, faults, gateway.Refuse, nil)
		if err != nil {
			errs[errKind(err)]++
			continue
		}
		if err = d.run(ctx, q, 0); err != nil {
			errs[errKind(err)]++
			d.kill(q, pid)
			continue
		}
		_ = q.Close(ctx) // a failed release is taken over by the next process
		d.kill(nil, pid)
		done = true
	}
	if ctx.Err() != nil {
		return nil, nil, d, nil, ctx.Err()
	}
	if !done {
		return nil, []string{fmt.Sprintf("the query did not complete in %d attempts (errors: %v)", attempts, errs)}, d, nil, nil
	}
	// nothing is left to do: a fault-free process finds the query complete
	q, pid, err := d.open(ctx, nil, gateway.Refuse, nil)
	if err != nil {
		return nil, nil, d, nil, fmt.Errorf("open after the faults: %w", err)
	}
	_, did, err := d.step(ctx, q)
	_ = q.Close(ctx)
	d.kill(nil, pid)
	if err != nil || did {
		failures = append(failures, fmt.Sprintf("after the faulty runs a clean process still had work: ran %v, %v", did, err))
	}
	by := faults.FiredBy()
	notes := []string{fmt.Sprintf("%d faults injected (%d fail-before, %d fail-after, %d timeout; seed %d), the query completed after %d attempts",
		faults.Fired(), by[gateway.FailBefore], by[gateway.FailAfter], by[gateway.Timeout], r.opts.Seed, attempts)}
	if len(errs) > 0 {
		var kinds []string
		for k, n := range errs {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		slices.Sort(kinds)
		notes = append(notes, "restarts after: "+strings.Join(kinds, ", "))
	}
	return notes, failures, d, r.ref, nil
}

// errKind names an error by its gateway kind, for the report.
func errKind(err error) string {
	if errors.Is(err, ErrPanic) {
		return "engine_panic"
	}
	if k := gateway.KindName(err); k != "" {
		return k
	}
	return "other"
}

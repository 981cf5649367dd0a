package rehearse

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/engine/source"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// The Delta source drills run the query on a Delta table built from the
// rehearsal's input (one version per input file, written by ckgate's
// Delta sink), whatever the spec's own source: they check what a restart
// does when the table changed under the checkpoint, so they are judged by
// the restart's refusal, not reconciled with the reference.

// deltaDrillBatches is how many batches a Delta drill runs before the
// table changes under it.
const deltaDrillBatches = 2

// buildDeltaTable writes the rehearsal's input into a new Delta table at
// dir (a new table id each time), with its own writer checkpoint under
// work, and returns the table's id.
func (r *rehearsal) buildDeltaTable(ctx context.Context, dir, work string) (string, error) {
	ws := &spec.Spec{Name: "rehearse-delta-table", Source: spec.Source{Kind: spec.SourceFiles, Path: r.input, Format: "jsonl", MaxFilesPerBatch: 1},
		Operator: spec.Operator{Kind: spec.OpNone}, EventTime: r.base.EventTime, Partitions: 1, OutputMode: spec.Append,
		Sink: spec.Sink{Kind: spec.SinkDelta, Path: dir}, Trigger: spec.Trigger{AvailableNow: true}}
	cp, err := newDirStore(work)
	if err != nil {
		return "", err
	}
	defer gateway.Close(cp)
	reg := wrapRegistry(r.opts.Registry, func(u *url.URL, s gateway.Store) gateway.Store {
		if strings.TrimSuffix(u.String(), "/") == strings.TrimSuffix(r.input, "/") {
			s = readOnly(s)
		}
		return s
	})
	q, err := engine.Open(ctx, ws, engine.Options{Checkpoint: cp, CheckpointURL: work, Registry: reg, BaseDir: r.opts.BaseDir, Logger: r.log,
		Session: gateway.SessionOptions{Principal: "ckgate-rehearse", Host: drillHost, PID: 1, Heartbeat: -1}})
	if err != nil {
		return "", fmt.Errorf("write the drill's Delta table: %w", err)
	}
	err = q.Run(ctx, engine.Trigger{AvailableNow: true}, nil)
	if cerr := q.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write the drill's Delta table: %w", err)
	}
	st, err := newDirStore(dir)
	if err != nil {
		return "", err
	}
	defer gateway.Close(st)
	t, err := delta.Open(ctx, st, dir)
	if err != nil {
		return "", err
	}
	snap, err := t.Snapshot(ctx, -1)
	if err != nil {
		return "", err
	}
	return snap.Metadata.ID, nil
}

// newDeltaDrill is a drill whose query reads a Delta table of the input,
// from its first version, one data file a batch; it ran
// deltaDrillBatches batches. It returns the drill, the table's directory
// and id, and the rows the sink held then.
func (r *rehearsal) newDeltaDrill(ctx context.Context, name string) (d *drill, table, id string, rows int, err error) {
	if d, err = r.newDrill(name, r.input, 0); err != nil {
		return nil, "", "", 0, err
	}
	table = filepath.Join(d.dir, "table")
	if id, err = r.buildDeltaTable(ctx, table, filepath.Join(d.dir, "table-writer")); err != nil {
		return d, "", "", 0, err
	}
	d.spec.Source = spec.Source{Kind: spec.SourceDelta, Path: table, MaxFilesPerBatch: 1, StartingVersion: "0"}
	d.input = table
	q, pid, err := d.open(ctx, nil, gateway.Refuse, nil)
	if err != nil {
		return d, "", "", 0, err
	}
	err = d.run(ctx, q, deltaDrillBatches)
	d.kill(q, pid)
	if err != nil {
		return d, "", "", 0, fmt.Errorf("the first %d batches on the Delta table: %w", deltaDrillBatches, err)
	}
	out, err := d.output(ctx)
	return d, table, id, len(out), err
}

// restartRefused restarts the drill's query and returns the error that
// stopped it (nil: it ran to the end), and the failures when rows were
// published after the change.
func (d *drill) restartRefused(ctx context.Context, rowsBefore int) (error, []string) {
	q, pid, err := d.open(ctx, nil, gateway.Refuse, nil)
	if err == nil {
		err = d.run(ctx, q, 0)
		d.kill(q, pid)
	}
	out, oerr := d.output(ctx)
	if oerr != nil {
		return err, []string{oerr.Error()}
	}
	return err, want(len(out) == rowsBefore, "the sink held %d rows before the restart and %d after: rows were published from a table the checkpoint did not read", rowsBefore, len(out))
}

func sourceTableReplaced(ctx context.Context, r *rehearsal, res *Result) ([]string, []string, *drill, *refRun, error) {
	d, table, oldID, rows, err := r.newDeltaDrill(ctx, "source-table-replaced")
	if err != nil {
		return nil, nil, d, nil, err
	}
	// CREATE OR REPLACE: the same path, a new table id
	if err := os.RemoveAll(table); err != nil {
		return nil, nil, d, nil, err
	}
	newID, err := r.buildDeltaTable(ctx, table, filepath.Join(d.dir, "table-writer-2"))
	if err != nil {
		return nil, nil, d, nil, err
	}
	rerr, failures := d.restartRefused(ctx, rows)
	switch {
	case rerr == nil:
		failures = append(failures, fmt.Sprintf("the restart read the replaced table (id %s, the checkpoint read %s) without a word", newID, oldID))
	case !errors.Is(rerr, source.ErrDifferentTable):
		failures = append(failures, fmt.Sprintf("the restart failed, but not as a replaced table: %v", rerr))
	case !strings.Contains(rerr.Error(), oldID) || !strings.Contains(rerr.Error(), newID):
		failures = append(failures, fmt.Sprintf("the refusal does not name both table ids (%s, %s): %v", oldID, newID, rerr))
	}
	notes := []string{fmt.Sprintf("ran %d batches on table %s, replaced it by table %s at the same path", deltaDrillBatches, oldID, newID)}
	if rerr != nil {
		notes = append(notes, "the restart was refused: "+rerr.Error())
	}
	return notes, failures, d, nil, nil
}

func sourceFilesVacuumed(ctx context.Context, r *rehearsal, res *Result) ([]string, []string, *drill, *refRun, error) {
	d, table, _, rows, err := r.newDeltaDrill(ctx, "source-files-vacuumed")
	if err != nil {
		return nil, nil, d, nil, err
	}
	d.mu.Lock()
	var last engine.Progress
	for _, p := range d.last {
		if p.BatchID >= last.BatchID {
			last = p
		}
	}
	d.mu.Unlock()
	if len(last.Sources) == 0 {
		return nil, nil, d, nil, errors.New("the drill recorded no source offset")
	}
	pos, err := source.DeltaPosition(last.Sources[0].EndOffset)
	if err != nil {
		return nil, nil, d, nil, err
	}
	// VACUUM: the data files of the versions the checkpoint has not read
	st, err := newDirStore(table)
	if err != nil {
		return nil, nil, d, nil, err
	}
	defer gateway.Close(st)
	t, err := delta.Open(ctx, st, table)
	if err != nil {
		return nil, nil, d, nil, err
	}
	var gone []string
	for v := pos.Version; v <= t.Log().Latest(); v++ {
		acts, err := delta.ReadCommit(ctx, st, v)
		if err != nil {
			return nil, nil, d, nil, err
		}
		for _, a := range acts {
			if a.Add != nil {
				if err := st.Delete(ctx, a.Add.Path, gateway.None()); err != nil {
					return nil, nil, d, nil, err
				}
				gone = append(gone, a.Add.Path)
			}
		}
	}
	if len(gone) == 0 {
		return nil, []string{"not exercised: the first batches read the whole table (give more input files)"}, d, nil, nil
	}
	rerr, failures := d.restartRefused(ctx, rows)
	switch {
	case rerr == nil:
		failures = append(failures, fmt.Sprintf("the restart ran with %d data files gone (%s, …): rows were silently skipped", len(gone), gone[0]))
	case !errors.Is(rerr, source.ErrInputGone):
		failures = append(failures, fmt.Sprintf("the restart failed, but not as a gap: %v", rerr))
	case !strings.Contains(rerr.Error(), "part-"):
		failures = append(failures, fmt.Sprintf("the gap does not name the missing files: %v", rerr))
	}
	notes := []string{fmt.Sprintf("ran %d batches, then removed the %d data files of versions %d on", deltaDrillBatches, len(gone), pos.Version)}
	if rerr != nil {
		notes = append(notes, "the restart reported the gap: "+rerr.Error())
	}
	return notes, failures, d, nil, nil
}

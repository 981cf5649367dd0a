package source

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// Errors of the delta source, checked with errors.Is.
var (
	// ErrDifferentTable: the table at the source's path is not the one
	// the checkpoint read (its id differs from the offsets' reservoirId).
	ErrDifferentTable = errors.New("DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE")
	// ErrInputGone: versions or data files the checkpoint still has to
	// read are gone from the table (log cleanup, VACUUM).
	ErrInputGone = errors.New("input the checkpoint still has to read is gone")
)

// deltaFile is one data file of the source's stream, at its position.
type deltaFile struct {
	pos delta.Position
	add delta.Add
}

// posCmp orders positions: by version, the initial snapshot of a version
// before its changes, then by index (BaseIndex: before every file).
func posCmp(a, b delta.Position) int {
	starting := func(p delta.Position) int {
		if p.IsStartingVersion {
			return 0
		}
		return 1
	}
	return cmp.Or(cmp.Compare(a.Version, b.Version), cmp.Compare(starting(a), starting(b)), cmp.Compare(a.Index, b.Index))
}

// deltaSource reads a Delta table as Spark's Delta source does: the
// table's snapshot at the latest version first (its files by modification
// time, then path) (starting_version latest,
// the default: offsets with isStartingVersion true while inside it), or
// the changes from version N on (starting_version N); then each later
// version in order, its add actions with dataChange true in commit order.
// Offsets are Spark's DeltaSourceOffset: a batch that read every file up to
// version v ends at (v+1, -1, false). A version that removes data (a
// DELETE, UPDATE or MERGE) stops the stream, as Spark's source does
// without ignoreDeletes/ignoreChanges; add actions without dataChange
// (OPTIMIZE) are not input.
//
// A restart checks the recorded position with delta.Table.CheckResume:
// another table id at the path is ErrDifferentTable naming both ids;
// versions or data files that are gone are ErrInputGone naming them and
// the earliest version that can be read. Nothing is silently skipped.
type deltaSource struct {
	env      Env
	in       gateway.Store
	url      string
	max      int
	starting string // "latest" or a version
	checked  bool
}

func newDelta(ctx context.Context, s *spec.Spec, env Env) (*deltaSource, error) {
	in, u, err := env.Open(ctx, s.Source.Path)
	if err != nil {
		return nil, fmt.Errorf("source.path %s: %w", s.Source.Path, err)
	}
	return &deltaSource{env: env, in: in, url: strings.TrimSuffix(u, "/"), max: s.Source.MaxFilesPerBatch,
		starting: s.Source.StartingVersion}, nil
}

func (d *deltaSource) Identity() map[string]string {
	return map[string]string{"kind": spec.SourceDelta, "path": d.url}
}

func (d *deltaSource) Close() error { return gateway.Close(d.in) }

func (d *deltaSource) errorf(format string, args ...any) error {
	return fmt.Errorf("delta source %s: "+format, append([]any{gateway.Redact(d.url)}, args...)...)
}

// open lists the table's log.
func (d *deltaSource) open(ctx context.Context) (*delta.Table, error) {
	t, err := delta.Open(ctx, d.in, d.url)
	if err != nil {
		return nil, d.errorf("%w", err)
	}
	return t, nil
}

// check runs CheckResume on the first offset this process resumes from.
func (d *deltaSource) check(ctx context.Context, t *delta.Table, p delta.Position) error {
	if d.checked {
		return nil
	}
	rep, err := t.CheckResume(ctx, p)
	if errors.Is(err, delta.ErrLogGap) {
		return d.errorf("%w: resuming at version %d: %w; the earliest version that can be read is %d",
			ErrInputGone, p.Version, err, t.Log().EarliestReplayable())
	}
	if err != nil {
		return d.errorf("%w", err)
	}
	switch rep.Status {
	case delta.ResumeOK:
		d.checked = true
		return nil
	case delta.ResumeIdentityChanged:
		at := ""
		if rep.IDChangedAt != nil {
			at = fmt.Sprintf(" (the id changed at version %d)", *rep.IDChangedAt)
		}
		return d.errorf("%w: the checkpoint read table id %s, the table now has id %s%s: it was replaced (CREATE OR REPLACE) or is another table; start a new checkpoint for it",
			ErrDifferentTable, p.TableID, rep.TableID, at)
	case delta.ResumeGap:
		var what []string
		if mv := rep.MissingVersions; mv != nil {
			what = append(what, fmt.Sprintf("versions %d to %d are gone from %s (DELTA_MISSING_FILES_UNEXPECTED_VERSION)", mv[0], mv[1], delta.LogDir))
		}
		if n := len(rep.MissingFiles); n > 0 {
			names := make([]string, 0, min(n, 5))
			names = append(names, rep.MissingFiles[:min(n, 5)]...)
			what = append(what, fmt.Sprintf("%d data files are gone (FAILED_READ_FILE.FILE_NOT_EXIST): %s", n, strings.Join(names, ", ")))
		}
		return d.errorf("%w: resuming at version %d: %s; the earliest version that can be read is %d",
			ErrInputGone, p.Version, strings.Join(what, "; "), rep.EarliestVersion)
	}
	return d.errorf("cannot resume at version %d: %s (%s)", p.Version, rep.Status, rep.Reason)
}

// files lists the files after start (nil: from the beginning) in stream
// order, up to limit of them (limit <= 0: all), or, when until is set,
// those up to and including until. It returns them, the next version it
// has not read, and whether it stopped at limit inside a version (then
// the last file's position is where the batch ends).
func (d *deltaSource) files(ctx context.Context, t *delta.Table, start, until *delta.Position, limit int) (_ []deltaFile, next int64, mid bool, _ error) {
	var out []deltaFile
	latest := t.Log().Latest()
	full := func() bool { return until == nil && limit > 0 && len(out) >= limit }
	within := func(p delta.Position) bool { return until == nil || posCmp(p, *until) <= 0 }
	from := int64(0)
	switch {
	case start != nil && start.IsStartingVersion:
		m, err := d.snapshotFiles(ctx, t, *start, start.Version, within, full, &out)
		if err != nil || m {
			return out, start.Version, m, err
		}
		from = start.Version + 1
	case start != nil:
		from = start.Version
	case d.starting == "" || d.starting == "latest":
		v := latest
		if until != nil {
			// the initial snapshot's version, as Next chose it
			v = until.Version
			if !until.IsStartingVersion {
				v--
			}
		}
		p := delta.Position{Version: v, Index: delta.BaseIndex, IsStartingVersion: true}
		m, err := d.snapshotFiles(ctx, t, p, v, within, full, &out)
		if err != nil || m {
			return out, v, m, err
		}
		from = v + 1
	default:
		n, err := strconv.ParseInt(d.starting, 10, 64)
		if err != nil {
			return nil, 0, false, d.errorf("source.starting_version %q: want latest or a version", d.starting)
		}
		from = n
	}
	v := from
	for ; v <= latest && !full(); v++ {
		if until != nil && v > until.Version {
			break
		}
		acts, err := delta.ReadCommit(ctx, t.Store(), v)
		if errors.Is(err, gateway.ErrNotFound) {
			return nil, 0, false, d.errorf("%w: version %d (%s) is gone (DELTA_MISSING_FILES_UNEXPECTED_VERSION); the earliest version the log holds from there on is %d",
				ErrInputGone, v, delta.CommitKey(v), t.Log().EarliestReplayable())
		}
		if err != nil {
			return nil, 0, false, d.errorf("%w", err)
		}
		idx := int64(-1)
		for _, a := range acts {
			switch {
			case a.MetaData != nil && start != nil && a.MetaData.ID != start.TableID:
				return nil, 0, false, d.errorf("%w: version %d gives the table id %s, the checkpoint read %s", ErrDifferentTable, v, a.MetaData.ID, start.TableID)
			case a.Remove != nil && a.Remove.DataChange:
				return nil, 0, false, d.errorf("version %d removes data (a DELETE, UPDATE or MERGE: %s); the delta source reads append-only tables, as Spark's does without ignoreDeletes (DELTA_SOURCE_IGNORE_DELETE)", v, a.Remove.Path)
			case a.Add != nil && a.Add.DataChange:
				idx++
				p := delta.Position{Version: v, Index: idx}
				if start != nil && posCmp(p, *start) <= 0 || !within(p) {
					continue
				}
				if full() {
					return out, v, true, nil
				}
				out = append(out, deltaFile{pos: p, add: *a.Add})
			}
		}
	}
	return out, v, false, nil
}

// snapshotFiles appends the files of the snapshot at version v after
// position after (index order: by modification time, then path); mid
// reports that it stopped at the limit before the snapshot's last file.
func (d *deltaSource) snapshotFiles(ctx context.Context, t *delta.Table, after delta.Position, v int64,
	within func(delta.Position) bool, full func() bool, out *[]deltaFile) (mid bool, _ error) {
	if v < 0 {
		return false, nil // no version yet
	}
	snap, err := t.Snapshot(ctx, v)
	if err != nil {
		if errors.Is(err, delta.ErrLogGap) {
			return false, d.errorf("%w: the snapshot at version %d: %w", ErrInputGone, v, err)
		}
		return false, d.errorf("%w", err)
	}
	// Spark's order for the initial snapshot: by modification time, then path
	files := slices.Clone(snap.Files)
	slices.SortStableFunc(files, func(a, b delta.Add) int {
		return cmp.Or(cmp.Compare(a.ModificationTime, b.ModificationTime), cmp.Compare(a.Path, b.Path))
	})
	for i, f := range files {
		p := delta.Position{Version: v, Index: int64(i), IsStartingVersion: true}
		if posCmp(p, after) <= 0 || !within(p) {
			continue
		}
		if full() {
			return true, nil
		}
		*out = append(*out, deltaFile{pos: p, add: f})
	}
	return false, nil
}

// tableID is the table's id at its latest version.
func tableID(ctx context.Context, t *delta.Table) (string, error) {
	snap, err := t.Snapshot(ctx, -1)
	if err != nil {
		return "", err
	}
	return snap.Metadata.ID, nil
}

func (d *deltaSource) Next(ctx context.Context, start string) (string, error) {
	t, err := d.open(ctx)
	if err != nil {
		return "", err
	}
	var sp *delta.Position
	id := ""
	if start != "" {
		p, err := DeltaPosition(start)
		if err != nil {
			return "", d.errorf("offset %s: %w", start, err)
		}
		if err := d.check(ctx, t, p); err != nil {
			return "", err
		}
		sp, id = &p, p.TableID
	} else if id, err = tableID(ctx, t); err != nil {
		return "", d.errorf("%w", err)
	}
	fs, next, mid, err := d.files(ctx, t, sp, nil, d.max)
	if err != nil {
		return "", err
	}
	// a batch ends at its last file when more of that version remain,
	// else before the first version it has not read
	end := delta.Position{Version: next, Index: delta.BaseIndex}
	if mid {
		end = fs[len(fs)-1].pos
	}
	end.TableID = id
	if sp != nil && posCmp(end, *sp) <= 0 {
		return start, nil
	}
	return end.SourceOffset(), nil
}

func (d *deltaSource) Read(ctx context.Context, start, end string, emit func(*row.Row) error) error {
	t, err := d.open(ctx)
	if err != nil {
		return err
	}
	ep, err := DeltaPosition(end)
	if err != nil {
		return d.errorf("offset %s: %w", end, err)
	}
	var sp *delta.Position
	if start != "" {
		p, err := DeltaPosition(start)
		if err != nil {
			return d.errorf("offset %s: %w", start, err)
		}
		sp = &p
	}
	check := ep
	if sp != nil {
		check = *sp
	}
	if err := d.check(ctx, t, check); err != nil {
		return err
	}
	fs, _, _, err := d.files(ctx, t, sp, &ep, 0)
	if err != nil {
		return err
	}
	for _, f := range fs {
		if err := d.readFile(ctx, f, emit); err != nil {
			return err
		}
	}
	return nil
}

// readFile emits the rows of one data file.
func (d *deltaSource) readFile(ctx context.Context, f deltaFile, emit func(*row.Row) error) error {
	if f.add.DeletionVector != nil {
		return d.errorf("%s (version %d) has a deletion vector, which the delta source does not apply", f.add.Path, f.pos.Version)
	}
	key, ok, err := delta.FileKey(d.url, f.add.Path)
	if err != nil {
		return d.errorf("add %s (version %d): %w", f.add.Path, f.pos.Version, err)
	}
	if !ok {
		return d.errorf("add %s (version %d) is outside the table (%s is not read)", f.add.Path, f.pos.Version, key)
	}
	data, _, err := gateway.GetBounded(ctx, d.in, key, 0)
	if errors.Is(err, gateway.ErrNotFound) {
		return d.errorf("%w: %s, added at version %d, does not exist (FAILED_READ_FILE.FILE_NOT_EXIST: VACUUM removed it?)", ErrInputGone, key, f.pos.Version)
	}
	if err != nil {
		return d.errorf("%w", err)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range f.add.PartitionValues {
			if !yield(k) {
				return
			}
		}
	})
	var extra []row.Value
	var extraNames []string
	for _, n := range names {
		if v := f.add.PartitionValues[n]; v != "" {
			extra, extraNames = append(extra, row.StrV(v)), append(extraNames, n)
		}
	}
	return parquetRows(d.url+"/"+key, data, extra, extraNames, emit)
}

// DeltaPosition reads a Delta source offset (checkpoint.DecodeDeltaSourceOffset)
// as a position; sourceVersion 3's base index -100 is delta.BaseIndex.
func DeltaPosition(text string) (delta.Position, error) {
	o, err := checkpoint.DecodeDeltaSourceOffset(text)
	if err != nil {
		return delta.Position{}, err
	}
	p := delta.Position{TableID: o.ReservoirID, Version: o.ReservoirVersion, Index: o.Index, IsStartingVersion: o.IsStartingVersion}
	if p.Index == checkpoint.DeltaBaseIndexV3 {
		p.Index = delta.BaseIndex
	}
	return p, nil
}

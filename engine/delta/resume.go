package delta

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/ckgate/ckgate/gateway"
)

// Resume statuses (ckgate gap --delta).
const (
	ResumeOK              = "ok"
	ResumeGap             = "gap"
	ResumeIdentityChanged = "identity-changed"
	ResumeAhead           = "ahead"
	ResumeCatalogManaged  = "catalog-managed"
)

// Position is where a streaming Delta source resumes: Spark's
// DeltaSourceOffset (engine/checkpoint decodes it from offsets/N).
type Position struct {
	TableID string // reservoirId
	Version int64  // reservoirVersion
	// Index is the position inside Version: -1 (or Spark's base index
	// -100, or the metadata-change indexes -20 and -19) is before every
	// file; i >= 0 means the files up to i were read.
	Index int64
	// IsStartingVersion: the stream is still inside the initial snapshot
	// of Version.
	IsStartingVersion bool
}

// MissingFile is a data or deletion-vector file a resume needs that is
// gone.
type MissingFile struct {
	Path    string `json:"path"`    // the key under the table
	Version int64  `json:"version"` // the version that added it (the snapshot version for a starting stream)
}

// ResumeReport says whether a stream can resume from a Position.
type ResumeReport struct {
	Status            string `json:"status"`
	ResumeVersion     int64  `json:"resume_version"`
	IsStartingVersion bool   `json:"is_starting_version"`
	// EarliestVersion is the earliest version a resume can start at:
	// the log horizon, or the version after the newest one with a missing
	// file when files are gone.
	EarliestVersion int64  `json:"earliest_version"`
	LatestVersion   int64  `json:"latest_version"`
	TableID         string `json:"table_id"`
	CheckpointID    string `json:"checkpoint_table_id"`
	// IDChangedAt is the version whose metaData set the current id, when
	// the retained log shows it.
	IDChangedAt *int64 `json:"id_changed_at,omitempty"`
	// MissingVersions are the versions [from, to] the log no longer has.
	MissingVersions *[2]int64 `json:"missing_versions,omitempty"`
	// MissingFiles are the keys of the missing files (empty when none);
	// Missing says which version added each.
	MissingFiles []string      `json:"missing_files"`
	Missing      []MissingFile `json:"missing,omitempty"`
	// FilesChecked counts the files whose existence was checked;
	// Unchecked the absolute paths outside the table that were not.
	FilesChecked int      `json:"files_checked"`
	Unchecked    []string `json:"unchecked,omitempty"`
	Reason       string   `json:"reason,omitempty"`
}

// OK reports whether the stream can resume.
func (r *ResumeReport) OK() bool { return r.Status == ResumeOK }

// MaxIDScan bounds how many commits CheckResume reads back from the
// latest to find where the table id changed.
const MaxIDScan = 10000

// CheckResume checks that a stream at p can resume on the table: the id
// is the one it read (identity-changed), the version is not past the
// latest + 1 (ahead), the commits from p's version on are still in the
// log and every data file (and deletion vector) added at or after it still
// exists (gap); for a stream still inside its initial snapshot, that the
// snapshot can be built and every file of it exists. A catalog-managed
// table is reported as such (the storage log cannot tell).
func (t *Table) CheckResume(ctx context.Context, p Position) (*ResumeReport, error) {
	l := t.log
	r := &ResumeReport{ResumeVersion: p.Version, IsStartingVersion: p.IsStartingVersion, CheckpointID: p.TableID,
		LatestVersion: l.Latest(), EarliestVersion: l.EarliestReplayable(), MissingFiles: []string{}}
	if p.IsStartingVersion {
		r.EarliestVersion = l.EarliestSnapshot()
	}
	if l.Staged {
		r.Status, r.Reason = ResumeCatalogManaged, "the log has _staged_commits/: the catalog holds commits the storage log does not"
		return r, nil
	}
	latest, err := t.Snapshot(ctx, -1)
	switch {
	case errors.Is(err, ErrCatalogManaged):
		r.Status, r.Reason = ResumeCatalogManaged, err.Error()
		return r, nil
	case err != nil:
		return nil, err
	}
	r.TableID = latest.Metadata.ID
	if r.TableID != p.TableID {
		r.Status = ResumeIdentityChanged
		r.Reason = fmt.Sprintf("the checkpoint read table id %s; the table at this location now has id %s (replaced, e.g. by CREATE OR REPLACE, or another table): Spark fails with DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE", p.TableID, r.TableID)
		if v, ok, err := t.idSetAt(ctx, r.TableID); err != nil {
			return nil, err
		} else if ok {
			r.IDChangedAt = &v
		}
		return r, nil
	}
	if p.Version > r.LatestVersion+1 {
		r.Status = ResumeAhead
		r.Reason = fmt.Sprintf("the checkpoint resumes at version %d; the table's latest version is %d (at most %d can be next)", p.Version, r.LatestVersion, r.LatestVersion+1)
		return r, nil
	}
	var need []neededFile
	from := p.Version
	if p.IsStartingVersion {
		snap, err := t.Snapshot(ctx, p.Version)
		var ge *GapError
		if errors.As(err, &ge) {
			return t.versionGap(r, ge.From, ge.To, fmt.Sprintf("the initial snapshot at version %d cannot be built: %v", p.Version, err)), nil
		}
		if err != nil {
			return nil, err
		}
		// DeltaSource indexes the initial snapshot's files ordered by
		// modification time, then path
		files := slices.Clone(snap.Files)
		slices.SortStableFunc(files, func(a, b Add) int {
			return cmp.Or(cmp.Compare(a.ModificationTime, b.ModificationTime), cmp.Compare(a.Path, b.Path))
		})
		for i, f := range files {
			if int64(i) > p.Index {
				need = append(need, neededFile{f, p.Version})
			}
		}
		from = p.Version + 1
	} else if p.Version <= r.LatestVersion {
		if m := l.firstMissing(p.Version, r.LatestVersion); m >= 0 {
			e := l.ContiguousFrom(r.LatestVersion)
			return t.versionGap(r, p.Version, e-1, fmt.Sprintf("the stream resumes at version %d; the log replays from version %d only (log cleanup: delta.logRetentionDuration)", p.Version, e)), nil
		}
	}
	for v := from; v <= r.LatestVersion; v++ {
		if !l.HasCommit(v) {
			e := l.ContiguousFrom(r.LatestVersion)
			return t.versionGap(r, v, e-1, fmt.Sprintf("version %d is missing from the log", v)), nil
		}
		acts, err := ReadCommit(ctx, t.store, v)
		if err != nil {
			return nil, err
		}
		i := int64(-1)
		for _, a := range acts {
			if a.Add == nil || !a.Add.DataChange {
				continue
			}
			i++
			if v == p.Version && !p.IsStartingVersion && i <= p.Index {
				continue
			}
			need = append(need, neededFile{*a.Add, v})
		}
	}
	if err := t.checkFiles(ctx, need, r); err != nil {
		return nil, err
	}
	if len(r.Missing) > 0 {
		r.Status = ResumeGap
		last := int64(-1)
		for _, m := range r.Missing {
			last = max(last, m.Version)
		}
		r.EarliestVersion = max(r.EarliestVersion, last+1)
		r.Reason = fmt.Sprintf("%d files the stream still reads are gone (VACUUM: delta.deletedFileRetentionDuration): Spark fails with FAILED_READ_FILE.FILE_NOT_EXIST or DELTA_MISSING_FILES_UNEXPECTED_VERSION", len(r.Missing))
		return r, nil
	}
	r.Status = ResumeOK
	return r, nil
}

func (t *Table) versionGap(r *ResumeReport, from, to int64, why string) *ResumeReport {
	r.Status, r.Reason = ResumeGap, why
	if to < from {
		to = from
	}
	r.MissingVersions = &[2]int64{from, to}
	return r
}

type neededFile struct {
	add     Add
	version int64
}

// checkFiles stats every needed data file and deletion vector file
// (8 at a time) and records the missing ones in r.
func (t *Table) checkFiles(ctx context.Context, need []neededFile, r *ResumeReport) error {
	type probe struct {
		key     string
		version int64
	}
	var probes []probe
	seen := map[string]bool{}
	for _, n := range need {
		keys := []string{n.add.Path}
		if dv := n.add.DeletionVector; dv != nil && dv.StorageType != "i" {
			k, ok, err := DVKey(t.URL, dv)
			if err != nil {
				return fmt.Errorf("%w: add %s at version %d: %v", ErrCorrupt, n.add.Path, n.version, err)
			}
			if !ok {
				r.Unchecked = append(r.Unchecked, k)
			} else {
				probes = append(probes, probe{k, n.version})
			}
		}
		for _, p := range keys {
			k, ok, err := FileKey(t.URL, p)
			if err != nil {
				return fmt.Errorf("%w: %s at version %d: %v", ErrCorrupt, CommitKey(n.version), n.version, err)
			}
			if !ok {
				r.Unchecked = append(r.Unchecked, k)
				continue
			}
			if !seen[k] {
				seen[k] = true
				probes = append(probes, probe{k, n.version})
			}
		}
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, p := range probes {
		g.Go(func() error {
			_, err := t.store.Stat(gctx, p.key)
			if errors.Is(err, gateway.ErrNotFound) {
				mu.Lock()
				r.Missing = append(r.Missing, MissingFile{Path: p.key, Version: p.version})
				mu.Unlock()
				return nil
			}
			if err != nil {
				return fmt.Errorf("stat %s (added at version %d): %w", p.key, p.version, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	r.FilesChecked = len(probes)
	sort.Slice(r.Missing, func(i, j int) bool {
		a, b := r.Missing[i], r.Missing[j]
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Path < b.Path
	})
	for _, m := range r.Missing {
		r.MissingFiles = append(r.MissingFiles, m.Path)
	}
	return nil
}

// idSetAt finds the version whose metaData action set id, reading the
// commits back from the latest (at most MaxIDScan): ok false when the
// retained log does not show it (set before the log horizon, or in a
// checkpoint only).
func (t *Table) idSetAt(ctx context.Context, id string) (int64, bool, error) {
	l := t.log
	at, found := int64(-1), false
	stop := max(l.EarliestReplayable(), l.Latest()-MaxIDScan)
	for v := l.Latest(); v >= stop; v-- {
		if !l.HasCommit(v) {
			break
		}
		acts, err := ReadCommit(ctx, t.store, v)
		if err != nil {
			return 0, false, err
		}
		for _, a := range acts {
			if a.MetaData == nil {
				continue
			}
			if a.MetaData.ID != id {
				return at, found, nil // the id before the change
			}
			at, found = v, true
		}
	}
	return 0, false, nil // created with this id, or set before the horizon: no change shown
}

// IDChange is one table id and the version that set it.
type IDChange struct {
	Version int64  `json:"version"`
	ID      string `json:"id"`
}

// IDHistory lists the table ids the retained log shows, oldest first: the
// id of the oldest replayable snapshot, then every metaData action that
// changed it.
func (t *Table) IDHistory(ctx context.Context) ([]IDChange, error) {
	l := t.log
	start := l.EarliestSnapshot()
	if start < 0 {
		return nil, gapError(l.EarliestReplayable()-1, l.EarliestReplayable()-1, "no snapshot can be built")
	}
	snap, err := t.Snapshot(ctx, start)
	if err != nil {
		return nil, err
	}
	out := []IDChange{{Version: start, ID: snap.Metadata.ID}}
	if snap.Base == nil {
		// replayed from 0: the first metaData action is at the version that set it
		out[0].Version = 0
	}
	for v := start + 1; v <= l.Latest(); v++ {
		acts, err := ReadCommit(ctx, t.store, v)
		if err != nil {
			return nil, err
		}
		for _, a := range acts {
			if a.MetaData != nil && a.MetaData.ID != out[len(out)-1].ID {
				out = append(out, IDChange{Version: v, ID: a.MetaData.ID})
			}
		}
	}
	return out, nil
}

package delta

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// Snapshot is the state of a table at one version.
type Snapshot struct {
	Version  int64
	Protocol Protocol
	Metadata Metadata
	// Files are the live data files (add actions), sorted by path.
	Files []Add
	// Tombstones are the remove actions still kept, sorted by path.
	Tombstones []Remove
	// Txns is the latest txn version per application id.
	Txns map[string]Txn
	// Base is the checkpoint the snapshot started from (nil: replayed
	// from version 0).
	Base *CheckpointFiles
	// Warnings say what the reader skipped: an unreadable _last_checkpoint,
	// a corrupt checkpoint it fell back from.
	Warnings []string
}

// TxnVersion returns the txn version of appID and whether there is one
// (Delta reads "none" as -1).
func (s *Snapshot) TxnVersion(appID string) (int64, bool) {
	t, ok := s.Txns[appID]
	if !ok {
		return -1, false
	}
	return t.Version, true
}

// Table reads one Delta table through a store rooted at the table.
type Table struct {
	store gateway.Store
	// URL is the table's canonical location, used to resolve absolute
	// paths in add actions ("" when unknown: absolute paths are then
	// reported, not resolved).
	URL string
	log *Log
}

// Open lists the log of the table in s (see ListLog); tableURL is the
// table's location as the user spelled it (canonicalised here).
func Open(ctx context.Context, s gateway.Store, tableURL string) (*Table, error) {
	u := tableURL
	if tableURL != "" {
		if c, err := gateway.CanonicalRoot(tableURL); err == nil {
			u = c
		}
	}
	l, err := ListLog(ctx, s)
	if err != nil {
		return nil, err
	}
	return &Table{store: s, URL: u, log: l}, nil
}

// Log is the listing Open made.
func (t *Table) Log() *Log { return t.log }

// Store is the table's store.
func (t *Table) Store() gateway.Store { return t.store }

type fileKey struct{ path, dv string }

func dvID(d *DeletionVector) string {
	if d == nil {
		return ""
	}
	id := d.StorageType + d.PathOrInlineDv
	if d.Offset != nil {
		id += "@" + strconv.Itoa(int(*d.Offset))
	}
	return id
}

// state accumulates actions in log order.
type state struct {
	version    int64
	protocol   *Protocol
	protoKey   string
	metadata   *Metadata
	files      map[fileKey]Add
	tombstones map[fileKey]Remove
	txns       map[string]Txn
}

func newState() *state {
	return &state{version: -1, files: map[fileKey]Add{}, tombstones: map[fileKey]Remove{}, txns: map[string]Txn{}}
}

func (st *state) apply(key string, acts []Action) {
	for _, a := range acts {
		switch {
		case a.Add != nil:
			k := fileKey{a.Add.Path, dvID(a.Add.DeletionVector)}
			delete(st.tombstones, k)
			st.files[k] = *a.Add
		case a.Remove != nil:
			k := fileKey{a.Remove.Path, dvID(a.Remove.DeletionVector)}
			delete(st.files, k)
			st.tombstones[k] = *a.Remove
		case a.Txn != nil:
			st.txns[a.Txn.AppID] = *a.Txn
		case a.MetaData != nil:
			m := *a.MetaData
			st.metadata = &m
		case a.Protocol != nil:
			p := *a.Protocol
			st.protocol, st.protoKey = &p, key
		}
	}
}

// Snapshot returns the table at version (the latest when version < 0):
// the newest complete checkpoint at or before it that reads, then the
// commits after it. A checkpoint that does not read is skipped (said in
// Warnings) for an older one, or for a replay from version 0. A missing
// commit is a *GapError; a protocol this package cannot read a
// *ProtocolError.
func (t *Table) Snapshot(ctx context.Context, version int64) (*Snapshot, error) {
	latest := t.log.Latest()
	if version < 0 {
		version = latest
	}
	if version > latest {
		return nil, fmt.Errorf("%w: version %d is after the latest version %d of the table", ErrLogGap, version, latest)
	}
	var warnings []string
	if w := t.lastCheckpointWarning(ctx); w != "" {
		warnings = append(warnings, w)
	}
	cps := t.log.CheckpointVersions()
	for i := len(cps) - 1; i >= -1; i-- {
		st := newState()
		var base *CheckpointFiles
		from := int64(0)
		if i >= 0 {
			c := cps[i]
			if c > version {
				continue
			}
			// a checkpoint is only a base when the commits after it reach version
			if m := t.log.firstMissing(c+1, version); m >= 0 {
				continue
			}
			ok := false
			for _, cf := range t.log.Checkpoints[c] {
				cf := cf
				err := t.readCheckpoint(ctx, cf, st)
				if err == nil {
					base, ok = &cf, true
					break
				}
				if !errors.Is(err, ErrCorrupt) {
					return nil, err
				}
				warnings = append(warnings, err.Error())
				st = newState()
			}
			if !ok {
				continue
			}
			from = c + 1
			st.version = c
		}
		if m := t.log.firstMissing(from, version); m >= 0 {
			to := m
			for to < version && !t.log.HasCommit(to+1) {
				to++
			}
			return nil, gapError(m, to, fmt.Sprintf("version %d cannot be built: no checkpoint at or before it is followed by every commit up to it", version))
		}
		for v := from; v <= version; v++ {
			acts, err := ReadCommit(ctx, t.store, v)
			if err != nil {
				return nil, err
			}
			st.apply(CommitKey(v), acts)
			st.version = v
		}
		return st.snapshot(base, warnings)
	}
	return nil, gapError(0, 0, "no checkpoint and no commit 0")
}

func (st *state) snapshot(base *CheckpointFiles, warnings []string) (*Snapshot, error) {
	if st.protocol == nil {
		return nil, fmt.Errorf("%w: version %d has no protocol action", ErrCorrupt, st.version)
	}
	if err := st.protocol.Check(st.protoKey); err != nil {
		return nil, err
	}
	if st.metadata == nil {
		return nil, fmt.Errorf("%w: version %d has no metaData action", ErrCorrupt, st.version)
	}
	s := &Snapshot{Version: st.version, Protocol: *st.protocol, Metadata: *st.metadata, Txns: st.txns, Base: base, Warnings: warnings}
	s.Files = make([]Add, 0, len(st.files))
	for _, a := range st.files {
		s.Files = append(s.Files, a)
	}
	slices.SortFunc(s.Files, func(a, b Add) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(dvID(a.DeletionVector), dvID(b.DeletionVector)))
	})
	s.Tombstones = make([]Remove, 0, len(st.tombstones))
	for _, r := range st.tombstones {
		s.Tombstones = append(s.Tombstones, r)
	}
	slices.SortFunc(s.Tombstones, func(a, b Remove) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(dvID(a.DeletionVector), dvID(b.DeletionVector)))
	})
	return s, nil
}

// lastCheckpointWarning reads _last_checkpoint: "" when it is absent or
// names a complete checkpoint, else why it is not used (the listing is).
func (t *Table) lastCheckpointWarning(ctx context.Context) string {
	data, _, err := gateway.GetBounded(ctx, t.store, LastCheckpointKey, 1<<20)
	if errors.Is(err, gateway.ErrNotFound) {
		return ""
	}
	if err != nil {
		return fmt.Sprintf("%s not read (%v): the checkpoint is found by listing", LastCheckpointKey, err)
	}
	lc, err := ParseLastCheckpoint(LastCheckpointKey, data)
	if err != nil {
		return fmt.Sprintf("%v: the checkpoint is found by listing", err)
	}
	if _, ok := t.log.Checkpoints[lc.Version]; !ok {
		return fmt.Sprintf("%s names version %d, which has no complete checkpoint: the checkpoint is found by listing", LastCheckpointKey, lc.Version)
	}
	return ""
}

// readCheckpoint applies the actions of checkpoint cf (all parts, and the
// sidecars of a v2 checkpoint) to st.
func (t *Table) readCheckpoint(ctx context.Context, cf CheckpointFiles, st *state) error {
	for _, f := range cf.Files {
		acts, err := t.readCheckpointFile(ctx, f.Key(), f.Format)
		if err != nil {
			return err
		}
		if cf.Kind == KindV2Checkpoint {
			var side []Action
			for _, a := range acts {
				if a.Sidecar == nil {
					continue
				}
				key, err := sidecarKey(a.Sidecar.Path)
				if err != nil {
					return fmt.Errorf("%w: %s: %v", ErrCorrupt, f.Key(), err)
				}
				sa, err := t.readCheckpointFile(ctx, key, "parquet")
				if errors.Is(err, gateway.ErrNotFound) {
					return fmt.Errorf("%w: %s names sidecar %s, which does not exist", ErrCorrupt, f.Key(), key)
				}
				if err != nil {
					return err
				}
				side = append(side, sa...)
			}
			acts = append(acts, side...)
		}
		st.apply(f.Key(), acts)
	}
	return nil
}

// sidecarKey is the key of a sidecar named by a v2 checkpoint: a file name
// under _delta_log/_sidecars/ (absolute sidecar URIs are not followed).
func sidecarKey(p string) (string, error) {
	if strings.Contains(p, "://") || strings.HasPrefix(p, "/") {
		if i := strings.Index(p, "/_delta_log/_sidecars/"); i >= 0 {
			p = p[i+len("/_delta_log/_sidecars/"):]
		} else {
			return "", fmt.Errorf("sidecar %q is outside %s", p, SidecarDir)
		}
	}
	name := path.Clean(p)
	if name == "." || strings.Contains(name, "/") || strings.HasPrefix(name, "..") {
		return "", fmt.Errorf("sidecar %q is not a file name under %s", p, SidecarDir)
	}
	return SidecarDir + name, nil
}

func (t *Table) readCheckpointFile(ctx context.Context, key, format string) ([]Action, error) {
	if format == "json" {
		return readActions(ctx, t.store, key)
	}
	data, _, err := gateway.GetBounded(ctx, t.store, key, MaxCheckpointBytes)
	if err != nil {
		return nil, err
	}
	return ParseCheckpointParquet(key, data)
}

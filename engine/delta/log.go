package delta

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// Log is one listing of a table's _delta_log/: which commits and which
// complete checkpoints exist.
type Log struct {
	// Commits are the versions of the commit files present, ascending.
	Commits []int64
	// Checkpoints are the complete checkpoints, by version; several kinds
	// may exist for one version (newest kinds first: v2, classic,
	// multi-part).
	Checkpoints map[int64][]CheckpointFiles
	// Staged reports a _delta_log/_staged_commits/ directory: the
	// commits of a catalog-managed table that the catalog has not yet
	// published.
	Staged bool
	// Attrs of every log file by key (commits and checkpoint parts).
	Attrs map[string]gateway.Attrs
}

// CheckpointFiles is one complete checkpoint: its files in part order.
type CheckpointFiles struct {
	Version int64
	Kind    FileKind
	Files   []LogFile
}

// ListLog lists _delta_log/ of the table in s. A table without any log
// file is ErrNotDelta. Incomplete multi-part checkpoints are left out.
func ListLog(ctx context.Context, s gateway.Store) (*Log, error) {
	l := &Log{Checkpoints: map[int64][]CheckpointFiles{}, Attrs: map[string]gateway.Attrs{}}
	parts := map[[2]int64][]LogFile{} // (version, parts) -> parts seen
	any := false
	for a, err := range s.List(ctx, LogDir) {
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", LogDir, err)
		}
		any = true
		name := strings.TrimPrefix(a.Key, LogDir)
		if strings.HasPrefix(name, "_staged_commits/") {
			l.Staged = true
			continue
		}
		if strings.Contains(name, "/") {
			continue
		}
		f, ok := ParseLogName(name)
		if !ok {
			continue
		}
		switch f.Kind {
		case KindCommit:
			l.Commits = append(l.Commits, f.Version)
		case KindCheckpoint, KindV2Checkpoint:
			l.Checkpoints[f.Version] = append(l.Checkpoints[f.Version], CheckpointFiles{Version: f.Version, Kind: f.Kind, Files: []LogFile{f}})
		case KindMultiPartCheckpoint:
			k := [2]int64{f.Version, int64(f.Parts)}
			parts[k] = append(parts[k], f)
		default:
			continue
		}
		l.Attrs[a.Key] = a
	}
	if !any {
		if err := notDelta(ctx, s); err != nil {
			return nil, err
		}
	}
	for k, fs := range parts {
		slices.SortFunc(fs, func(a, b LogFile) int { return a.Part - b.Part })
		if len(fs) != int(k[1]) {
			continue // an incomplete (or still being written) multi-part checkpoint
		}
		l.Checkpoints[k[0]] = append(l.Checkpoints[k[0]], CheckpointFiles{Version: k[0], Kind: KindMultiPartCheckpoint, Files: fs})
	}
	for v, cs := range l.Checkpoints {
		slices.SortStableFunc(cs, func(a, b CheckpointFiles) int { return kindRank(a.Kind) - kindRank(b.Kind) })
		l.Checkpoints[v] = cs
	}
	slices.Sort(l.Commits)
	if len(l.Commits) == 0 && len(l.Checkpoints) == 0 {
		return nil, fmt.Errorf("%w: %s holds no commit or checkpoint", ErrNotDelta, LogDir)
	}
	return l, nil
}

func kindRank(k FileKind) int {
	switch k {
	case KindV2Checkpoint:
		return 0
	case KindCheckpoint:
		return 1
	}
	return 2
}

// notDelta is the error for a location whose _delta_log/ lists nothing:
// ErrNotDelta, saying whether the location holds anything at all.
func notDelta(ctx context.Context, s gateway.Store) error {
	for a, err := range s.List(ctx, "") {
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		return fmt.Errorf("%w: no %s (the location holds files, e.g. %s, but no Delta log)", ErrNotDelta, LogDir, a.Key)
	}
	return fmt.Errorf("%w: no %s (the location is empty)", ErrNotDelta, LogDir)
}

// Latest is the table's latest version: the newest commit (or checkpoint).
func (l *Log) Latest() int64 {
	v := int64(-1)
	if n := len(l.Commits); n > 0 {
		v = l.Commits[n-1]
	}
	for c := range l.Checkpoints {
		v = max(v, c)
	}
	return v
}

// HasCommit reports whether the commit of version v is present.
func (l *Log) HasCommit(v int64) bool {
	_, ok := slices.BinarySearch(l.Commits, v)
	return ok
}

// ContiguousFrom is the earliest version E such that the commits E..to
// are all present (to+1 when commit to is missing).
func (l *Log) ContiguousFrom(to int64) int64 {
	i, ok := slices.BinarySearch(l.Commits, to)
	if !ok {
		return to + 1
	}
	for i > 0 && l.Commits[i-1] == l.Commits[i]-1 {
		i--
	}
	return l.Commits[i]
}

// firstMissing is the first version in [from, to] without a commit, or -1.
func (l *Log) firstMissing(from, to int64) int64 {
	i, _ := slices.BinarySearch(l.Commits, from)
	for v := from; v <= to; v++ {
		if i >= len(l.Commits) || l.Commits[i] != v {
			return v
		}
		i++
	}
	return -1
}

// CheckpointVersions are the versions with a complete checkpoint, ascending.
func (l *Log) CheckpointVersions() []int64 {
	out := make([]int64, 0, len(l.Checkpoints))
	for v := range l.Checkpoints {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// EarliestReplayable is the earliest version from which the log replays
// to the latest commit: a stream resuming inside a version
// (isStartingVersion false) needs the commits from its version on, so this
// is ContiguousFrom(Latest()).
func (l *Log) EarliestReplayable() int64 { return l.ContiguousFrom(l.Latest()) }

// EarliestSnapshot is the earliest version a snapshot can be built at and
// then replayed to the latest commit: 0 when every commit from 0 is
// there, else the oldest checkpoint at or after EarliestReplayable()-1.
// It is -1 when no version can be (a gap after the newest checkpoint).
func (l *Log) EarliestSnapshot() int64 {
	e := l.EarliestReplayable()
	if e == 0 {
		return 0
	}
	for _, c := range l.CheckpointVersions() {
		if c >= e-1 {
			return c
		}
	}
	return -1
}

// gap returns the *GapError for the missing versions from..to.
func gapError(from, to int64, why string) error {
	return &GapError{Log: LogDir, From: from, To: to, Missing: CommitKey(from), Why: why}
}

var errStop = errors.New("stop")

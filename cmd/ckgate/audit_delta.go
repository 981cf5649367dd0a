package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/lifecycle"
	"github.com/ckgate/ckgate/policy"
)

// auditDeltaFlag is audit's --delta TABLE_URL (repeatable).
func auditDeltaFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "delta", Usage: "a Delta table `TABLE_URL` the audited checkpoints may read: its retention is checked against the outage window (repeatable)"}
}

// auditDeltaTables reads the id and retention of each --delta table and
// of every Delta table (a directory holding _delta_log/) under the audited
// targets (when any is named). A named table that cannot be read is
// reported (CKG-A014), not an audit failure; a found one is left out.
func (e *env) auditDeltaTables(c *cli.Context, targets []policy.Target) ([]policy.DeltaTableInfo, error) {
	var out []policy.DeltaTableInfo
	seen := map[string]bool{}
	for _, raw := range c.StringSlice("delta") {
		info := policy.DeltaTableInfo{URL: gateway.Redact(raw)}
		t, closeFn, err := lifecycle.OpenDeltaTable(c.Context, e.openerFor(c), raw)
		if err != nil {
			if errors.As(err, new(*UsageError)) {
				return nil, err
			}
			info.Error = err.Error()
		} else {
			info = deltaTableInfo(c.Context, t, info)
			closeFn()
		}
		seen[info.URL] = true
		out = append(out, info)
	}
	if len(out) == 0 {
		return nil, nil // tables are checked against checkpoints only when named
	}
	for _, tg := range targets {
		dirs, err := deltaTableDirs(c.Context, tg.Store)
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			info := policy.DeltaTableInfo{URL: policy.JoinPath(gateway.Redact(tg.URL), d)}
			if seen[info.URL] {
				continue
			}
			seen[info.URL] = true
			st := tg.Store
			if d != "" {
				st = gateway.WithPrefix(st, d+"/")
			}
			t, err := delta.Open(c.Context, st, "")
			if err != nil {
				continue // a directory that only looks like a table is no finding
			}
			if info = deltaTableInfo(c.Context, t, info); info.Error != "" {
				continue
			}
			out = append(out, info)
		}
	}
	return out, nil
}

// deltaTableDirs lists s and returns the directories that hold a
// _delta_log/ ("" for s itself), in order.
func deltaTableDirs(ctx context.Context, s gateway.Store) ([]string, error) {
	var out []string
	last := "\x00"
	for a, err := range s.List(ctx, "") {
		if err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		i := strings.Index("/"+a.Key, "/_delta_log/")
		if i < 0 {
			continue
		}
		dir := strings.TrimSuffix(a.Key[:max(i-1, 0)], "/")
		if i == 0 {
			dir = ""
		}
		if dir != last {
			out, last = append(out, dir), dir
		}
	}
	return out, nil
}

func deltaTableInfo(ctx context.Context, t *delta.Table, info policy.DeltaTableInfo) policy.DeltaTableInfo {
	snap, err := t.Snapshot(ctx, -1)
	if err != nil {
		info.Error = err.Error()
		return info
	}
	r, err := delta.RetentionOf(snap.Metadata)
	if err != nil {
		info.Error = err.Error()
		return info
	}
	l := t.Log()
	info.ID, info.LatestVersion, info.Commits = snap.Metadata.ID, snap.Version, len(l.Commits)
	info.LogRetentionHours = r.Log.Hours()
	info.DeletedFileRetentionHours = r.DeletedFiles.Hours()
	info.LogCleanup = r.LogCleanup
	if a, ok := l.Attrs[delta.CommitKey(l.Latest())]; ok {
		info.Growing = len(l.Commits) > 1 && time.Since(a.Modified) < r.Log
	}
	return info
}

// deltaSourcesOf returns the table ids (reservoirId) the Delta sources of
// the checkpoint at root of st read, from its latest offsets batch.
func deltaSourcesOf(ctx context.Context, st gateway.Store, root string) ([]string, error) {
	if root != "" {
		st = gateway.WithPrefix(st, root+"/")
	}
	rep, err := checkpoint.Inspect(ctx, st, checkpoint.Options{MaxBatches: 1, MaxStateVersions: -1})
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", root, err)
	}
	var ids []string
	for _, s := range rep.Sources {
		if s.Offset != nil && s.Offset.Delta != nil {
			ids = append(ids, s.Offset.Delta.ReservoirID)
		}
	}
	return ids, nil
}

package main

import (
	"context"
	"fmt"
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

// auditDeltaTables reads each --delta table's id and retention. A table
// that cannot be read is reported (CKG-A014), not an audit failure.
func (e *env) auditDeltaTables(c *cli.Context) []policy.DeltaTableInfo {
	var out []policy.DeltaTableInfo
	for _, raw := range c.StringSlice("delta") {
		out = append(out, deltaTableInfo(c.Context, e.openerFor(c), raw))
	}
	return out
}

func deltaTableInfo(ctx context.Context, open func(context.Context, string) (gateway.Store, error), raw string) policy.DeltaTableInfo {
	info := policy.DeltaTableInfo{URL: gateway.Redact(raw)}
	t, closeFn, err := lifecycle.OpenDeltaTable(ctx, open, raw)
	if err != nil {
		info.Error = err.Error()
		return info
	}
	defer closeFn()
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

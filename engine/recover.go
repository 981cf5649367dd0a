package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/operator"
	"github.com/ckgate/ckgate/engine/state"
	"github.com/ckgate/ckgate/gateway"
)

// recover finds where to resume (Spark's populateStartOffsets).
func (q *Query) recover(ctx context.Context) error {
	L, err := latestID(ctx, q.cp, checkpoint.OffsetsDir)
	if err != nil {
		return err
	}
	C, err := latestID(ctx, q.cp, checkpoint.CommitsDir)
	if err != nil {
		return err
	}
	q.restored.LastCommitted, q.restored.RerunBatch = C, -1
	switch {
	case L < 0 && C < 0:
		q.restored.New = true
		return nil
	case C > L:
		return fmt.Errorf("%w: commits/%d without offsets/%d", ErrCorrupt, C, C)
	case C < L-1:
		return fmt.Errorf("%w: offsets/%d but the latest commit is commits/%d (want %d or %d)", ErrCorrupt, L, C, L-1, L)
	}
	last, err := q.readOffsets(ctx, L)
	if err != nil {
		return err
	}
	if C == L {
		cm, err := q.readCommit(ctx, C)
		if err != nil {
			return err
		}
		if err := q.setTips(C, cm); err != nil {
			return err
		}
		q.next, q.start = L+1, last.end
		q.wm = max(last.wm, cm.NextBatchWatermarkMs)
		q.lastWm, q.lastBatch = last.wm, L
		q.restored.Watermark = q.wm
		return nil
	}
	// offsets/L without commits/L: re-run L from offsets/L-1's end
	if L > 0 {
		prev, err := q.readOffsets(ctx, L-1)
		if err != nil {
			return err
		}
		last.start = prev.end
		cm, err := q.readCommit(ctx, L-1)
		if err != nil {
			return err
		}
		if err := q.setTips(L-1, cm); err != nil {
			return err
		}
		q.lastWm = prev.wm
	}
	q.next, q.start, q.wm, q.rerun, q.lastBatch = L, last.start, last.wm, last, L-1
	q.restored.RerunBatch, q.restored.Watermark = L, last.wm
	return nil
}

func (q *Query) readOffsets(ctx context.Context, n int64) (*logged, error) {
	key := checkpoint.OffsetsKey(n)
	data, _, err := q.cp.Get(ctx, key)
	if err != nil {
		if errors.Is(err, gateway.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s is missing", ErrCorrupt, key)
		}
		return nil, err
	}
	return decodeOffsets(key, n, data)
}

func decodeOffsets(key string, n int64, data []byte) (*logged, error) {
	seq, err := checkpoint.DecodeOffsetSeq(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if len(seq.Sources) != 1 {
		return nil, fmt.Errorf("%s: %w: %d sources in the checkpoint offsets and now there is 1", key, ErrIncompatible, len(seq.Sources))
	}
	l := &logged{batch: n}
	if seq.Sources[0].Present {
		l.end = seq.Sources[0].JSON
	}
	if seq.Metadata != nil {
		l.wm, l.ts = seq.Metadata.BatchWatermarkMs, seq.Metadata.BatchTimestampMs
	}
	return l, nil
}

func (q *Query) readCommit(ctx context.Context, n int64) (*checkpoint.CommitMetadata, error) {
	key := checkpoint.CommitKey(n)
	data, _, err := q.cp.Get(ctx, key)
	if err != nil {
		if errors.Is(err, gateway.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s is missing", ErrCorrupt, key)
		}
		return nil, err
	}
	cm, err := checkpoint.DecodeCommit(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return cm, nil
}

// setTips takes the state file of every partition from commit n.
func (q *Query) setTips(n int64, cm *checkpoint.CommitMetadata) error {
	for p := range q.tips {
		q.tips[p] = state.Tip{}
	}
	if !q.op.Stateful() {
		return nil
	}
	ids := cm.StateUniqueIDs[0]
	if ids == nil {
		if len(cm.StateUniqueIDs) == 0 && n >= 0 {
			return nil // no state yet
		}
		return fmt.Errorf("%s: %w: no state files for operator 0", checkpoint.CommitKey(n), ErrCorrupt)
	}
	if len(ids) != q.parts {
		return fmt.Errorf("%s: %w: state of %d partitions, the checkpoint's plan has %d", checkpoint.CommitKey(n), ErrCorrupt, len(ids), q.parts)
	}
	for p, f := range ids {
		if len(f) > 0 {
			q.tips[p] = state.Tip{Name: f[0]}
		}
	}
	return nil
}

// tipIDs renders the tips for commits/N.
func (q *Query) tipIDs() map[int64][][]string {
	if !q.op.Stateful() {
		return nil
	}
	ids := make([][]string, q.parts)
	for p, t := range q.tips {
		ids[p] = []string{}
		if t.Name != "" {
			ids[p] = []string{t.Name}
		}
	}
	return map[int64][][]string{0: ids}
}

// loadState rebuilds every partition from its tip, in parallel.
func (q *Query) loadState(ctx context.Context) (files int, bytes int64, err error) {
	if q.loaded || !q.op.Stateful() {
		q.loaded = true
		return 0, 0, nil
	}
	tips := make([]string, q.parts)
	for p, t := range q.tips {
		tips[p] = t.Name
	}
	var reserve func(p, n int)
	if r, ok := q.op.(operator.Reserver); ok {
		reserve = r.Reserve
	}
	loaded, err := q.st.LoadAll(ctx, tips, max(2, runtime.GOMAXPROCS(0)), reserve, q.op.Restore)
	if err != nil {
		return 0, 0, err
	}
	for p, l := range loaded {
		if tips[p] == "" {
			continue
		}
		q.tips[p] = l.Tip
		files += l.Files
		bytes += l.Bytes
	}
	q.loaded = true
	return files, bytes, nil
}

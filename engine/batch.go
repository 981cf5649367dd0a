package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/operator"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/state"
	"golang.org/x/sync/errgroup"
)

// conf is the "conf" of offsets/N: what Spark pins in the offset log.
func (q *Query) conf() map[string]string {
	return map[string]string{
		"spark.sql.shuffle.partitions":                     fmt.Sprint(q.parts),
		"spark.sql.streaming.multipleWatermarkPolicy":      "min",
		"spark.sql.streaming.stateStore.providerClass":     "io.ckgate.engine.state.Store",
		"spark.sql.streaming.stateStore.compression.codec": "none",
	}
}

// RunBatch runs the next batch. It returns false (and no progress) when
// there is nothing to do: no new data and no watermark to act on. An error
// leaves the query unusable: close it and open it again to resume, which
// re-runs the batch from the log.
func (q *Query) RunBatch(ctx context.Context) (Progress, bool, error) {
	t0 := q.opts.Now()
	begin := time.Now()
	clock := begin
	durUs := map[string]int64{}
	lap := func(name string) {
		now := time.Now()
		durUs[name] += now.Sub(clock).Microseconds()
		clock = now
	}
	if err := q.sess.BeginBatch(ctx); err != nil {
		return Progress{}, false, err
	}
	lap("writerCheck")
	p := Progress{ID: q.id, RunID: q.runID, Name: q.spec.Name, BatchID: q.next}
	p.Ckgate.Epoch = q.sess.Epoch()
	b := q.rerun
	writes := 0
	if b != nil {
		p.Ckgate.Rerun = true
	} else {
		end, err := q.src.Next(ctx, q.start)
		if err != nil {
			return Progress{}, false, err
		}
		lap("latestOffset")
		noData := end == q.start
		if noData && !(q.op.Stateful() && q.wm > q.lastWm && q.lastBatch >= 0) {
			return Progress{}, false, nil
		}
		p.Ckgate.NoData = noData
		b = &logged{batch: q.next, start: q.start, end: end, wm: q.wm, ts: t0.UnixMilli()}
		seq := checkpoint.OffsetSeq{Version: 1, Metadata: &checkpoint.OffsetSeqMetadata{
			BatchWatermarkMs: b.wm, BatchTimestampMs: b.ts, Conf: q.conf(), Epoch: q.sess.Epoch()},
			Sources: []checkpoint.OffsetEntry{{JSON: end, Present: end != ""}}}
		data, err := seq.Encode()
		if err != nil {
			return Progress{}, false, fmt.Errorf("offsets/%d: %w", b.batch, err)
		}
		e, err := q.sess.CreateEntry(ctx, checkpoint.OffsetsKey(b.batch), data)
		if err != nil {
			return Progress{}, false, err
		}
		writes++
		if e.Adopted {
			// a fenced writer logged this batch first: run it as logged
			adopted, err := decodeOffsets(checkpoint.OffsetsKey(b.batch), b.batch, e.Data)
			if err != nil {
				return Progress{}, false, err
			}
			adopted.start = q.start
			b = adopted
			p.Ckgate.AdoptedOffsets = true
		}
		lap("walCommit")
	}
	p.Timestamp = time.UnixMilli(b.ts).UTC().Format("2006-01-02T15:04:05.000Z")
	files, bytes, err := q.loadState(ctx)
	if err != nil {
		return Progress{}, false, err
	}
	lap("stateLoad")

	// read, stamp, filter, feed the operator
	var in, late, accepted, filtered, invalid int64
	delay := q.spec.Watermark.Ms()
	maxEvent, minEvent := int64(-1<<63), int64(1<<63-1)
	stateful := q.op.Stateful()
	tf := q.spec.EventTime
	tfield := row.NewField(tf)
	keys := newKeyChecks(q.spec)
	err = q.src.Read(ctx, b.start, b.end, func(r *row.Row) error {
		in++
		keys.see(r)
		var ts int64
		if tf != "" {
			if v := tfield.Ref(r); v != nil && v.K == row.Int {
				ts = v.I // epoch ms (the rate source's, for one)
			} else {
				t, ok := operator.EventTime(tfield.Get(r))
				if !ok {
					invalid++
					return nil
				}
				ts = t
			}
			if err := operator.CheckEventTime(ts); err != nil {
				return fmt.Errorf("%s: %w", tf, err) // the source names the input
			}
			maxEvent, minEvent = max(maxEvent, ts), min(minEvent, ts)
		}
		if q.where != nil && !q.where.Match(r) {
			filtered++
			return nil
		}
		if stateful && ts <= b.wm {
			late++
			return nil
		}
		if stateful && b.wm > 0 && ts <= b.wm+delay {
			accepted++
		}
		q.op.Add(ts, r)
		return nil
	})
	if err != nil {
		return Progress{}, false, err
	}
	if err := q.checkBatchFields(ctx, b, in, invalid, keys); err != nil {
		return Progress{}, false, err
	}
	var out []row.Row
	changes := q.op.Finish(b.wm, func(r *row.Row) { out = append(out, *r) })
	lap("getBatch")

	res, err := q.snk.Commit(ctx, b.batch, out)
	if err != nil {
		return Progress{}, false, err
	}
	lap("addBatch")

	so := stateOperator(q.op.Name(), q.op.Stats(), q.parts)
	so.NumRowsDroppedByWatermark = late
	so.StateFilesLoaded, so.StateBytesLoaded = files, bytes
	newTips := append([]state.Tip(nil), q.tips...)
	written, err := q.writeState(ctx, b.batch+1, changes)
	if err != nil {
		return Progress{}, false, err
	}
	for part, w := range written {
		if w.Key == "" {
			continue
		}
		newTips[part] = w.Tip
		so.StateFilesWritten++
		so.StateBytesWritten += w.Bytes
		if w.Tip.Snapshot {
			so.SnapshotsWritten++
		}
	}
	lap("stateCommit")

	next := b.wm
	if maxEvent > int64(-1<<63) && tf != "" {
		next = max(next, maxEvent-q.spec.Watermark.Ms())
	}
	old := q.tips
	q.tips = newTips
	cm := checkpoint.CommitMetadata{Version: 1, NextBatchWatermarkMs: next, StateUniqueIDs: q.tipIDs(), Epoch: q.sess.Epoch(),
		Progress: commitProgress(begin, durUs, so, stateful, in, int64(len(out)), late, accepted, filtered, invalid)}
	data, err := cm.Encode()
	if err != nil {
		q.tips = old
		return Progress{}, false, fmt.Errorf("commits/%d: %w", b.batch, err)
	}
	e, err := q.sess.CreateEntry(ctx, checkpoint.CommitKey(b.batch), data)
	if err != nil {
		q.tips = old
		return Progress{}, false, err
	}
	writes++
	if e.Adopted {
		got, err := checkpoint.DecodeCommit(e.Data)
		if err != nil {
			return Progress{}, false, fmt.Errorf("commits/%d: %w", b.batch, err)
		}
		if err := q.setTips(b.batch, got); err != nil {
			return Progress{}, false, err
		}
		// the adopted commit names another attempt's files; they hold what
		// this attempt computed (same offsets, same state before), so the
		// state in memory stays
		next = got.NextBatchWatermarkMs
		p.Ckgate.AdoptedCommit = true
	}
	lap("commitOffsets")

	q.rerun = nil
	q.next, q.start, q.lastWm, q.lastBatch = b.batch+1, b.end, b.wm, b.batch
	q.wm = max(b.wm, next)

	total := time.Since(begin)
	durUs["triggerExecution"] = total.Microseconds()
	p.DurationMs = make(map[string]int64, len(durUs))
	for k, v := range durUs {
		p.DurationMs[k] = v / 1000
	}
	p.Ckgate.DurationUs = durUs
	p.NumInputRows = in
	if s := total.Seconds(); s > 0 {
		p.ProcessedRowsPerSecond = float64(in) / s
	}
	p.EventTime = map[string]string{"watermark": operator.FormatTime(b.wm)}
	if maxEvent > int64(-1<<63) {
		p.EventTime["max"] = operator.FormatTime(maxEvent)
		p.EventTime["min"] = operator.FormatTime(minEvent)
	}
	if stateful {
		p.StateOperators = []StateOperator{so}
	} else {
		p.StateOperators = []StateOperator{}
	}
	p.Sources = []SourceProgress{{Description: describe(q.src.Identity()), StartOffset: b.start, EndOffset: b.end, NumInputRows: in}}
	p.Sink = SinkProgress{Description: describe(q.snk.Identity()), NumOutputRows: int64(len(out)), Skipped: res.Skipped}
	p.Ckgate.WatermarkMs, p.Ckgate.NextWatermarkMs = b.wm, q.wm
	p.Ckgate.LateRowsDropped, p.Ckgate.FilteredRows, p.Ckgate.InvalidTimeRows = late, filtered, invalid
	p.Ckgate.CheckpointWrites = writes + so.StateFilesWritten
	return p, true, nil
}

// writeState writes the changed partitions as version, several at a time
// (each write is a create-only PUT; on a local disk, an fsync).
func (q *Query) writeState(ctx context.Context, version int64, changes [][]state.Change) ([]state.Written, error) {
	out := make([]state.Written, len(changes))
	errs := make([]error, len(changes))
	var g errgroup.Group
	g.SetLimit(8)
	for part, cs := range changes {
		if len(cs) == 0 {
			continue
		}
		g.Go(func() error {
			out[part], errs[part] = q.st.Write(ctx, part, version, q.tips[part], cs,
				func(add func(state.Change)) { q.op.Snapshot(part, add) })
			return nil // every partition is tried: errs keeps each one's error
		})
	}
	g.Wait()
	return out, errors.Join(errs...)
}

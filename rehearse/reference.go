package rehearse

import (
	"context"
	"fmt"
	"net/url"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// refRun is the fault-free reference: the same query over the same input,
// on an in-memory checkpoint and sink.
type refRun struct {
	rows      []string
	progress  []engine.Progress
	rowsIn    int64
	late      int64
	stateRows int64
	plan      planStats
}

// reference runs the query fault-free over input (files is its content).
func (r *rehearsal) reference(ctx context.Context, input string, files []inputFile) (*refRun, error) {
	s := *r.base
	s.Source.Path = input
	var mem memstore.Named
	reg := wrapRegistry(r.opts.Registry, func(_ *url.URL, st gateway.Store) gateway.Store { return readOnly(st) })
	reg.Register("mem", mem.Open)
	var recv *Receiver
	switch s.Sink.Kind {
	case spec.SinkFiles:
		s.Sink.Path = "mem://reference-sink"
	case spec.SinkHTTP:
		var err error
		if recv, err = NewReceiver(0, 0); err != nil {
			return nil, err
		}
		defer recv.Close()
		s.Sink.URL, s.Sink.Headers = recv.URL, nil
	}
	q, err := engine.Open(ctx, &s, engine.Options{Checkpoint: memstore.New(), CheckpointURL: "mem://reference-checkpoint",
		Registry: reg, BaseDir: r.opts.BaseDir, Logger: r.log,
		Session: gateway.SessionOptions{Principal: "ckgate-rehearse", Host: drillHost, PID: 1, Heartbeat: -1,
			ProcessAlive: func(int) bool { return true }}})
	if err != nil {
		return nil, err
	}
	ref := &refRun{}
	err = q.Run(ctx, engine.Trigger{AvailableNow: true}, func(p engine.Progress) { ref.progress = append(ref.progress, p) })
	if cerr := q.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	for _, p := range ref.progress {
		ref.rowsIn += p.NumInputRows
		ref.late += p.Ckgate.LateRowsDropped
	}
	if n := len(ref.progress); n > 0 {
		ref.stateRows = stateRows(ref.progress[n-1])
	}
	if recv != nil {
		ref.rows = recv.Rows()
	} else if ref.rows, err = ReadFileSink(ctx, mem.Get("reference-sink")); err != nil {
		return nil, err
	}
	if ref.plan, err = simulate(&s, files); err != nil {
		return nil, err
	}
	if ref.plan.LateDropped != ref.late || ref.plan.Rows != ref.rowsIn {
		return nil, fmt.Errorf("the batch plan (max_files_per_batch %d over %d files) predicts %d rows in and %d late rows, the engine read %d and dropped %d",
			s.Source.MaxFilesPerBatch, len(files), ref.plan.Rows, ref.plan.LateDropped, ref.rowsIn, ref.late)
	}
	return ref, nil
}

// outputBatch picks the batch the crash scenarios hit: the first data
// batch after batch 0 with output, else the first batch after 0, else 0.
func (ref *refRun) outputBatch() (batch int64, rows int64) {
	for _, p := range ref.progress {
		if p.BatchID >= 1 && p.Sink.NumOutputRows > 0 {
			return p.BatchID, p.Sink.NumOutputRows
		}
	}
	if len(ref.progress) > 1 {
		return ref.progress[1].BatchID, 0
	}
	return 0, 0
}

// batchReading returns the id of the batch that read data chunk n (the
// file source's log offset n).
func (ref *refRun) batchReading(n int) (int64, bool) {
	for _, p := range ref.progress {
		if p.Ckgate.NoData || len(p.Sources) == 0 {
			continue
		}
		if off, err := checkpoint.DecodeFileSourceOffset(p.Sources[0].EndOffset); err == nil && off == int64(n) {
			return p.BatchID, true
		}
	}
	return 0, false
}

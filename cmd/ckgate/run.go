package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// runCommand is `ckgate run SPEC`: the embedded engine on a query spec.
func (e *env) runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a streaming query spec with ckgate's embedded micro-batch engine",
		ArgsUsage: "SPEC",
		Description: "Runs the query in the YAML file SPEC (docs/spec.md documents every field) as micro-batches,\n" +
			"writing its Spark-layout checkpoint only through a single-writer gateway session. A restart\n" +
			"resumes where the checkpoint says (a batch logged but not committed is re-run with the same\n" +
			"offsets); a checkpoint written by another query, plan, source or sink is refused.\n" +
			"A writer that crashed on this host is taken over at once; another live writer is waited for\n" +
			"until its lease expires or it releases the checkpoint, noticed within a second (--force takes\n" +
			"over at once).\n" +
			"Relative paths in SPEC and --checkpoint are resolved against the working directory.\n" +
			"Progress: a live line on a terminal, one JSON progress event per batch otherwise (--format).\n" +
			"Policy: the job (principal kind job) opens the checkpoint and writes every checkpoint and sink\n" +
			"file only if the OPA policies allow it (the defaults, plus --policy and --data); a checkpoint\n" +
			"holding another query, or a root equal to, inside or above a known query's root, is refused,\n" +
			"and so is any refused write (exit 4, naming the rule). --decision-log records every decision.\n" +
			"Without any policy data, a root inside another checkpoint's tree or above one is refused (exit 3,\n" +
			"naming it) before anything is written. Before the first batch, the spec is checked: a files\n" +
			"source path must exist (it is never created), and the event-time field and the operator keys\n" +
			"must be in the first rows (exit 1, naming the field and a file). A failed run's summary says which\n" +
			"batch is in flight and what a restart does.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "checkpoint", Usage: "checkpoint store `URL` or path (default: checkpoints/<spec name>)"},
			&cli.BoolFlag{Name: "available-now", Usage: "process what the source holds now, then stop"},
			&cli.IntFlag{Name: "batches", Usage: "stop after `N` batches"},
			&cli.StringFlag{Name: "format", Usage: "progress `FORMAT`: text (or table) or json (default: text on a terminal, json otherwise)"},
			&cli.BoolFlag{Name: "force", Usage: "take the checkpoint over from a live writer at once (it will be fenced)"},
			&cli.StringFlag{Name: "metrics-addr", Usage: "serve Prometheus metrics on `ADDR` (host:port) at /metrics while running"},
			&cli.StringFlag{Name: "principal", Usage: "the job principal's `ID` in policy decisions and the decision log (default: the OS user)"},
			decisionLogFlag(),
			adoptSinkFlag(),
		}, policyFlags()...),
		Action: e.run,
	}
}

func (e *env) run(c *cli.Context) error {
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	if c.Int("batches") < 0 {
		return usageErrorf(c, "--batches %d: want a positive number", c.Int("batches"))
	}
	if c.Bool("available-now") && c.Int("batches") > 0 {
		return usageErrorf(c, "--available-now and --batches: choose one")
	}
	format, err := formatOf(c, "text", "json")
	if err != nil {
		return err
	}
	if format == "" {
		format = "json"
		if isTerminal(e.stdout) {
			format = "live"
		}
	}
	s, err := spec.Load(a[0])
	if err != nil {
		return &InputError{Err: err}
	}
	ckURL := c.String("checkpoint")
	if ckURL == "" {
		ckURL = filepath.Join("checkpoints", s.Name)
	}
	ctx := c.Context
	cp, err := e.openStore(ctx, c, ckURL)
	if err != nil {
		return err
	}
	defer gateway.Close(cp)
	var metrics *runMetrics
	if addr := c.String("metrics-addr"); addr != "" {
		u, _ := gateway.ParseURL(ckURL)
		backend := "file"
		if u != nil {
			backend = u.Scheme
		}
		if metrics, cp, err = serveMetrics(ctx, addr, cp, backend); err != nil {
			return err
		}
		defer metrics.close()
	}
	if err := checkNotArchived(ctx, cp, ckURL); err != nil {
		return err
	}
	if err := e.checkRunRoot(c, cp, ckURL); err != nil {
		return err
	}
	cp, guard, err := e.guardRun(c, cp, ckURL, s)
	if err != nil {
		return err
	}
	defer guard.close()
	so := gateway.SessionOptions{Principal: principal(), TakeOver: gateway.Wait, Logger: e.log,
		OnWait: func(owner gateway.WriterRecord, until time.Time) {
			fmt.Fprintf(e.stderr, "ckgate: checkpoint %s is held by %s (query %s, principal %q, epoch %d, last heartbeat %s); waiting until its lease expires at %s, or sooner if it releases the checkpoint\n",
				gateway.Redact(ckURL), owner.Owner, owner.QueryID, owner.Principal, owner.Epoch,
				owner.Heartbeat.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))
		}}
	if c.Bool("force") {
		so.TakeOver = gateway.Force
	}
	q, err := engine.Open(ctx, s, engine.Options{Checkpoint: cp, CheckpointURL: ckURL, Registry: guard.registry(e.registry),
		Session: so, Console: e.stdout, Logger: e.log, Create: func(ctx context.Context) error {
			// Only now, the open decided and the spec checked, does a new
			// local checkpoint get its directory: a refused run leaves
			// nothing behind.
			if u, _ := gateway.ParseURL(ckURL); u != nil && u.Scheme == "file" {
				if err := gateway.MakeBucket(ctx, cp); err != nil {
					return fmt.Errorf("checkpoint %s: %w", gateway.Redact(ckURL), err)
				}
			}
			return nil
		}, AdoptSink: guard.sinkAdopter(cp, ckURL)})
	if err != nil {
		return err
	}
	defer q.Close(context.WithoutCancel(ctx))
	p := newRunPrinter(e.stdout, format)
	r := q.Restored()
	p.start(s, gateway.Redact(ckURL), r)
	t := engine.Trigger{AvailableNow: c.Bool("available-now") || s.Trigger.AvailableNow, MaxBatches: c.Int("batches"),
		Interval: s.Trigger.Interval.D()}
	err = q.Run(ctx, t, func(pr engine.Progress) {
		metrics.observe(pr)
		p.progress(pr)
	})
	p.finish(ctx, s, ckURL, q, err)
	if err != nil {
		return err
	}
	return q.Close(ctx)
}

// runMetrics are the engine's Prometheus metrics, served on --metrics-addr
// next to the checkpoint store's (ckgate_store_*).
type runMetrics struct {
	srv                               *http.Server
	batches, rowsIn, late, out        prometheus.Counter
	watermark, stateRows, lastBatchID prometheus.Gauge
	duration                          *prometheus.HistogramVec
}

func serveMetrics(ctx context.Context, addr string, cp gateway.Store, backend string) (*runMetrics, gateway.Store, error) {
	reg := prometheus.NewRegistry()
	sm, err := gateway.NewMetrics(reg)
	if err != nil {
		return nil, nil, err
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	}
	m := &runMetrics{
		batches:     counter("ckgate_engine_batches_total", "Batches run."),
		rowsIn:      counter("ckgate_engine_input_rows_total", "Rows read from the source."),
		late:        counter("ckgate_engine_late_rows_total", "Rows dropped at or below the watermark."),
		out:         counter("ckgate_engine_output_rows_total", "Rows handed to the sink."),
		watermark:   gauge("ckgate_engine_watermark_seconds", "Event-time watermark of the next batch (Unix seconds)."),
		stateRows:   gauge("ckgate_engine_state_rows", "Rows held in operator state."),
		lastBatchID: gauge("ckgate_engine_last_batch_id", "Id of the last batch run."),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ckgate_engine_batch_phase_seconds",
			Help: "Time per batch phase (durationMs of the progress events).", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18)},
			[]string{"phase"}),
	}
	for _, col := range []prometheus.Collector{m.batches, m.rowsIn, m.late, m.out, m.watermark, m.stateRows, m.lastBatchID, m.duration} {
		reg.MustRegister(col)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, &InputError{Err: fmt.Errorf("--metrics-addr %s: %w", addr, err)}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go m.srv.Serve(ln)
	return m, sm.Wrap(cp, backend), nil
}

func (m *runMetrics) observe(p engine.Progress) {
	if m == nil {
		return
	}
	m.batches.Inc()
	m.rowsIn.Add(float64(p.NumInputRows))
	m.late.Add(float64(p.Ckgate.LateRowsDropped))
	m.out.Add(float64(p.Sink.NumOutputRows))
	m.watermark.Set(float64(p.Ckgate.NextWatermarkMs) / 1000)
	m.lastBatchID.Set(float64(p.BatchID))
	var st int64
	for _, o := range p.StateOperators {
		st += o.NumRowsTotal
	}
	m.stateRows.Set(float64(st))
	for phase, us := range p.Ckgate.DurationUs {
		m.duration.WithLabelValues(phase).Observe(float64(us) / 1e6)
	}
}

func (m *runMetrics) close() {
	if m != nil {
		m.srv.Close()
	}
}

func principal() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// runPrinter renders progress: a live line, a line per batch, or JSON.
type runPrinter struct {
	w      io.Writer
	format string // live, text, json
	sum    runSummary
	live   bool
}

// runSummary is what a run did, printed at the end.
type runSummary struct {
	MessageType     string `json:"message_type"`
	QueryID         string `json:"id"`
	Name            string `json:"name"`
	Checkpoint      string `json:"checkpoint"`
	Output          string `json:"output,omitempty"`
	Batches         int    `json:"batches"`
	FirstBatch      int64  `json:"firstBatch"`
	LastBatch       int64  `json:"lastBatch"`
	Reruns          int    `json:"reruns"`
	RowsIn          int64  `json:"numInputRows"`
	LateRowsDropped int64  `json:"lateRowsDropped"`
	FilteredRows    int64  `json:"filteredRows"`
	InvalidTimeRows int64  `json:"invalidTimeRows"`
	RowsOut         int64  `json:"numOutputRows"`
	StateRows       int64  `json:"stateRows"`
	Watermark       string `json:"watermark,omitempty"`
	Error           string `json:"error,omitempty"`
	// PlanReplaced: the spec's plan replaced the recorded one of a
	// checkpoint that held no batch yet (what differed).
	PlanReplaced string `json:"planReplaced,omitempty"`
	// SettingsChanged: the settings recorded in the plan that this run
	// changed (watermark, where, source and sink options).
	SettingsChanged string `json:"settingsChanged,omitempty"`
	// CheckpointState is what the checkpoint shows after a failed run.
	CheckpointState *runState `json:"checkpointState,omitempty"`
}

type progressLine struct {
	MessageType string `json:"message_type"`
	engine.Progress
}

func newRunPrinter(w io.Writer, format string) *runPrinter {
	return &runPrinter{w: w, format: format, sum: runSummary{MessageType: "summary", FirstBatch: -1, LastBatch: -1}}
}

func (p *runPrinter) start(s *spec.Spec, ck string, r engine.Restored) {
	p.sum.QueryID, p.sum.Name, p.sum.Checkpoint = r.QueryID, s.Name, ck
	p.sum.PlanReplaced, p.sum.SettingsChanged = r.PlanReplaced, r.SettingsChanged
	if s.Sink.Kind == spec.SinkFiles || s.Sink.Kind == spec.SinkDelta {
		p.sum.Output = gateway.Redact(s.Sink.Path)
	}
	if p.format == "json" {
		return
	}
	switch {
	case r.New:
		fmt.Fprintf(p.w, "query %s (id %s): new checkpoint %s\n", s.Name, r.QueryID, ck)
	case r.RerunBatch >= 0:
		fmt.Fprintf(p.w, "query %s (id %s): resuming %s: batch %d was logged but not committed; re-running it with the same offsets\n",
			s.Name, r.QueryID, ck, r.RerunBatch)
	default:
		fmt.Fprintf(p.w, "query %s (id %s): resuming %s after batch %d\n", s.Name, r.QueryID, ck, r.LastCommitted)
	}
	if r.PlanReplaced != "" {
		fmt.Fprintf(p.w, "note: the checkpoint holds no batch yet, so the spec's plan replaces the one recorded in %s (%s)\n", checkpoint.PlanKey, r.PlanReplaced)
	}
	if r.SettingsChanged != "" {
		fmt.Fprintf(p.w, "note: the spec changes settings recorded in %s, written again (%s); `ckgate compat` says what a change does\n", checkpoint.PlanKey, r.SettingsChanged)
	}
	if r.Partitions != r.PartitionsSpec {
		fmt.Fprintf(p.w, "note: the checkpoint fixes %d partitions (the spec says %d)\n", r.Partitions, r.PartitionsSpec)
	}
}

func (p *runPrinter) progress(pr engine.Progress) {
	s := &p.sum
	s.Batches++
	if s.FirstBatch < 0 {
		s.FirstBatch = pr.BatchID
	}
	s.LastBatch = pr.BatchID
	if pr.Ckgate.Rerun {
		s.Reruns++
	}
	s.RowsIn += pr.NumInputRows
	s.LateRowsDropped += pr.Ckgate.LateRowsDropped
	s.FilteredRows += pr.Ckgate.FilteredRows
	s.InvalidTimeRows += pr.Ckgate.InvalidTimeRows
	s.RowsOut += pr.Sink.NumOutputRows
	state := int64(0)
	for _, o := range pr.StateOperators {
		state += o.NumRowsTotal
	}
	s.StateRows = state
	s.Watermark = pr.EventTime["watermark"]
	next := time.UnixMilli(pr.Ckgate.NextWatermarkMs).UTC().Format(time.RFC3339)
	switch p.format {
	case "json":
		b, _ := json.Marshal(progressLine{MessageType: "progress", Progress: pr})
		p.w.Write(append(b, '\n'))
	case "live":
		fmt.Fprintf(p.w, "\r\033[Kbatch %d  %s rows in (%.0f rows/s)  %d late  %d out  watermark %s  state %d rows",
			pr.BatchID, count(s.RowsIn), pr.ProcessedRowsPerSecond, s.LateRowsDropped, s.RowsOut, next, state)
		p.live = true
	default:
		flags := ""
		if pr.Ckgate.Rerun {
			flags += " (re-run)"
		}
		if pr.Ckgate.NoData {
			flags += " (no data: watermark advance)"
		}
		if pr.Sink.Skipped {
			flags += " (sink had it already)"
		}
		fmt.Fprintf(p.w, "batch %d%s: %d rows in, %d late, %d out, watermark %s → %s, state %d rows, %d ms\n",
			pr.BatchID, flags, pr.NumInputRows, pr.Ckgate.LateRowsDropped, pr.Sink.NumOutputRows,
			time.UnixMilli(pr.Ckgate.WatermarkMs).UTC().Format(time.RFC3339), next, state, pr.DurationMs["triggerExecution"])
	}
}

func count(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (p *runPrinter) finish(ctx context.Context, s *spec.Spec, ck string, q *engine.Query, err error) {
	sum := &p.sum
	if err != nil && !errors.Is(err, context.Canceled) {
		sum.Error = err.Error()
	}
	if err != nil {
		sum.CheckpointState = stateAfter(ctx, q)
	}
	if p.format == "json" {
		b, _ := json.Marshal(sum)
		p.w.Write(append(b, '\n'))
		return
	}
	if p.live {
		fmt.Fprintln(p.w)
	}
	switch {
	case sum.Batches == 0 && err == nil:
		fmt.Fprintf(p.w, "nothing new: the source has no data the checkpoint has not seen; no batch ran, nothing was written\n")
	case sum.Batches > 0:
		fmt.Fprintf(p.w, "\n%d batches (%d to %d", sum.Batches, sum.FirstBatch, sum.LastBatch)
		if sum.Reruns > 0 {
			fmt.Fprintf(p.w, ", %d re-run after a restart", sum.Reruns)
		}
		fmt.Fprintf(p.w, ")\n  rows in            %s\n  late rows dropped  %s (at or below the watermark)\n  filtered out       %s (where: %s)\n",
			count(sum.RowsIn), count(sum.LateRowsDropped), count(sum.FilteredRows), orDash(s.Where))
		if sum.InvalidTimeRows > 0 {
			fmt.Fprintf(p.w, "  bad event time     %s (dropped)\n", count(sum.InvalidTimeRows))
		}
		out, open := "rows out         ", ""
		switch s.Operator.Kind {
		case spec.OpSessionWindow:
			out, open = "sessions out     ", "sessions still open"
		case spec.OpTumbling, spec.OpSliding:
			out, open = "windows out      ", "windows still open"
		case spec.OpDedup:
			open = "keys held"
		}
		fmt.Fprintf(p.w, "  %s  %s\n", out, count(sum.RowsOut))
		if open != "" {
			fmt.Fprintf(p.w, "  %-17s  %s (in state; emitted or dropped once the watermark passes them)\n", open, count(sum.StateRows))
		}
		fmt.Fprintf(p.w, "  watermark          %s\n", sum.Watermark)
	}
	if sum.CheckpointState != nil {
		p.failure(sum.CheckpointState, err)
	}
	if sum.Output != "" {
		fmt.Fprintf(p.w, "output:     %s (readers follow %s/_spark_metadata)\n", sum.Output, sum.Output)
	}
	fmt.Fprintf(p.w, "checkpoint: %s\n", ck)
	if sum.CheckpointState != nil {
		fmt.Fprintf(p.w, "next:       ckgate inspect %s\n", ck)
		return
	}
	fmt.Fprintf(p.w, "next:       ckgate store ls -r %s\n", ck)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/compat"
	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/output"
)

// inspectCommand is `ckgate inspect URL`: what an on-call engineer needs
// to know about a checkpoint before restarting its query.
func (e *env) inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "report who wrote a checkpoint, where it stands and whether a restart will work",
		ArgsUsage: "URL",
		Description: "Reads the checkpoint at URL (Spark's layout, written by Spark 2.1 to 4.x or by ckgate) without\n" +
			"changing it and reports: who writes it (query id, writer, pinned confs); where it stands (the\n" +
			"latest offsets batch L, the latest commit C and the verdict: clean, in_flight, inconsistent or\n" +
			"empty, and what a restart will do); progress per batch (watermark, time, source offsets, per\n" +
			"Kafka partition); state (operators, stores, partitions, versions, whether the version a restart\n" +
			"loads can be rebuilt, puts and deletes, bytes); and findings, each with a stable id, a severity\n" +
			"and the key it is about.\n\n" +
			"--batch N details only batch N (it must exist in the offset or commit log). --sink URL names\n" +
			"the output directory of a file sink: its _spark_metadata log says whether an in-flight batch\n" +
			"was already written; a Delta table (it has a _delta_log) is reconciled by its txn for the query id\n" +
			"(or --txn-app-id): the in-flight batch is committed-in-sink, not-in-sink or unknown (a finding;\n" +
			"see docs/delta.md). --format json prints the report as one object:\n" +
			"{query_id, writer, status, latest_offsets_batch, latest_commit_batch, watermark_ms, confs,\n" +
			"resume, batches, sources, operators, sink, findings: [{id, severity, key, message, next}], ...};\n" +
			"next is the safe next step (nothing inspect reports is ever repaired or overwritten by ckgate).\n\n" +
			"Exit status: 0 clean, in_flight or empty with no error finding; 1 inconsistent or an error\n" +
			"finding; 2 not a checkpoint, unreadable, or a --batch that does not exist.",
		Flags: []cli.Flag{
			&cli.Int64Flag{Name: "batch", Usage: "detail only batch `N`"},
			&cli.IntFlag{Name: "max-batches", Value: 20, Usage: "detail the latest `N` batches (table; json: 100)"},
			&cli.StringFlag{Name: "sink", Usage: "file sink output directory or Delta table `URL` (its _spark_metadata log, or its _delta_log txn)"},
			&cli.StringFlag{Name: "txn-app-id", Usage: "the Delta sink's txn application `ID` (foreachBatch's txnAppId; default: the query id)"},
			&cli.BoolFlag{Name: "partitions", Usage: "table: one line per state partition (default: problems only)"},
			formatFlag(),
		},
		Action: e.inspect,
	}
}

func (e *env) inspect(c *cli.Context) error {
	a, f, err := argsFormat(c, 1, 1)
	if err != nil {
		return err
	}
	opts := checkpoint.Options{MaxBatches: c.Int("max-batches")}
	if f == "json" && !c.IsSet("max-batches") {
		opts.MaxBatches = 0 // the package default: Spark's minBatchesToRetain
	}
	if c.IsSet("max-batches") && opts.MaxBatches <= 0 {
		return usageErrorf(c, "--max-batches %d: want a positive number", opts.MaxBatches)
	}
	if c.IsSet("batch") {
		b := c.Int64("batch")
		if b < 0 {
			return usageErrorf(c, "--batch %d: want a batch id (0 or more)", b)
		}
		opts.Batch = &b
	}
	var deltaStore gateway.Store
	if raw := c.String("sink"); raw != "" {
		sink, err := e.openStore(c.Context, c, raw)
		if err != nil {
			return err
		}
		defer gateway.Close(sink)
		isDelta, err := isDeltaTable(c.Context, sink)
		if err != nil {
			return fmt.Errorf("sink %s: %w", gateway.Redact(raw), err)
		}
		if isDelta {
			deltaStore = sink
		} else {
			opts.Sink = sink
		}
	} else if c.IsSet("txn-app-id") {
		return usageErrorf(c, "--txn-app-id names the txn of a Delta sink: give --sink TABLE_URL too")
	}
	return e.withStore(c, a[0], func(s gateway.Store) error {
		rep, err := checkpoint.Inspect(c.Context, s, opts)
		if errors.Is(err, checkpoint.ErrNotCheckpoint) {
			return &InputError{Err: fmt.Errorf("%s: %w (no metadata, offsets/, commits/, state/ or _ckgate/ under it)", gateway.Redact(a[0]), err)}
		}
		if err != nil {
			return fmt.Errorf("inspect %s: %w", gateway.Redact(a[0]), err)
		}
		if opts.Batch != nil && !hasBatch(rep, *opts.Batch) {
			return &InputError{Err: fmt.Errorf("%s: batch %d is not in the checkpoint (offsets %s, commits %s)",
				gateway.Redact(a[0]), *opts.Batch, checkpoint.RangesText(rep.OffsetsLog.Ranges), checkpoint.RangesText(rep.CommitLog.Ranges))}
		}
		var ds *delta.SinkReport
		if deltaStore != nil {
			if ds, err = deltaSink(c.Context, deltaStore, c.String("sink"), rep, c.String("txn-app-id")); err != nil {
				if ie := deltaInputError(err); ie != nil {
					return ie
				}
				return err
			}
		}
		var v any = rep
		if ds != nil {
			v = inspectWithDeltaSink{Report: rep, Sink: ds}
		}
		t := &inspectTable{w: e.stdout, url: gateway.Redact(a[0]), partitions: c.Bool("partitions")}
		if err := render(e.stdout, f, v, func() error {
			if err := t.write(rep); err != nil {
				return err
			}
			if ds != nil {
				writeDeltaSink(e.stdout, ds)
			}
			return nil
		}); err != nil {
			return err
		}
		return inspectVerdict(rep)
	})
}

func hasBatch(r *checkpoint.Report, id int64) bool {
	return slices.ContainsFunc(r.Batches, func(b checkpoint.Batch) bool { return b.ID == id })
}

// inspectVerdict is the command's error for a report that is not OK: a
// FindingsError (exit 1); the report itself was already printed.
func inspectVerdict(r *checkpoint.Report) error {
	if r.OK() {
		return nil
	}
	var errs []checkpoint.Finding
	for _, f := range r.Findings {
		if f.Severity == checkpoint.SeverityError {
			errs = append(errs, f)
		}
	}
	what := "error findings"
	if len(errs) == 1 {
		what = "error finding"
	}
	if len(errs) > 0 {
		what += fmt.Sprintf(" (first: %s %s)", errs[0].ID, errs[0].Key)
	}
	if r.Status == checkpoint.StatusInconsistent {
		what += "; the checkpoint is inconsistent"
	}
	return &FindingsError{Count: len(errs), What: what}
}

// rangesText is checkpoint.RangesText, "none" for no ranges.
func rangesText(rs []checkpoint.Range) string { return cmp.Or(checkpoint.RangesText(rs), "none") }

// inspectTable prints a report for a person, most urgent first: the
// verdict, then who, progress, state and findings.
type inspectTable struct {
	w          io.Writer
	url        string
	partitions bool
	err        error
}

func (t *inspectTable) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

// table prints rows under a header, aligned.
func (t *inspectTable) table(header string, rows [][]string) {
	if t.err != nil {
		return
	}
	tb := output.NewTable(t.w).Indent("  ")
	tb.Row(header)
	for _, r := range rows {
		tb.Row(strings.Join(r, "\t"))
	}
	t.err = tb.Flush()
}

func (t *inspectTable) write(r *checkpoint.Report) error {
	t.overview(r)
	t.confs(r)
	t.batches(r)
	t.sources(r)
	t.state(r)
	t.sink(r)
	t.findings(r)
	return t.err
}

func optInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func msTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

func (t *inspectTable) overview(r *checkpoint.Report) {
	tb := output.NewTable(t.w)
	row := func(k, v string) { tb.Row(k, v) }
	row("CHECKPOINT", t.url)
	row("QUERY ID", output.Dash(r.QueryID))
	row("WRITER", writerText(r.Writer))
	row("STATUS", strings.ToUpper(string(r.Status))+statusHint(r))
	row("LATEST", fmt.Sprintf("offsets batch L=%s, commit C=%s (offsets log %s, commit log %s)",
		optInt(r.LatestOffsetsBatch), optInt(r.LatestCommitBatch), rangesText(r.OffsetsLog.Ranges), rangesText(r.CommitLog.Ranges)))
	if r.Resume != nil {
		next := fmt.Sprintf("batch %d", r.Resume.NextBatch)
		if r.Resume.Rerun {
			next += " (re-run)"
		}
		row("RESTART", fmt.Sprintf("runs %s loading state version %d: %s", next, r.Resume.StateVersion, r.Resume.Note))
	} else if r.Status == checkpoint.StatusInconsistent {
		row("RESTART", "refused or unsafe: see the error findings below")
	}
	if r.WatermarkMs != nil {
		wm := strconv.FormatInt(*r.WatermarkMs, 10) + " ms"
		if *r.WatermarkMs > 0 {
			wm += " (" + msTime(*r.WatermarkMs) + ")"
		}
		row("WATERMARK", wm)
	}
	fm := r.Format
	commits := "no commit log"
	if fm.CommitLogVersion > 0 {
		commits = fmt.Sprintf("commits v%d", fm.CommitLogVersion)
	}
	row("FORMAT", fmt.Sprintf("offsets v%d, %s, checkpoint format v%d", fm.OffsetLogVersion, commits, fm.CheckpointFormat))
	row("SIZE", fmt.Sprintf("%d files, %s (state %s)", r.Files, bytesText(r.TotalBytes), bytesText(r.StateBytes)))
	if t.err == nil {
		t.err = tb.Flush()
	}
}

func statusHint(r *checkpoint.Report) string {
	switch r.Status {
	case checkpoint.StatusClean:
		return " (C = L: a restart resumes at L+1)"
	case checkpoint.StatusInFlight:
		return " (batch L has no commit: a restart re-runs it with the same offsets)"
	case checkpoint.StatusInconsistent:
		return " (Spark would refuse to restart, or misbehave)"
	case checkpoint.StatusEmpty:
		return " (no batch yet)"
	}
	return ""
}

func writerText(w checkpoint.Writer) string {
	s := w.Kind
	var parts []string
	if w.Epoch > 0 {
		parts = append(parts, fmt.Sprintf("epoch %d", w.Epoch))
	}
	if w.Owner != "" {
		parts = append(parts, "owner "+w.Owner)
	}
	if w.Principal != "" {
		parts = append(parts, "principal "+w.Principal)
	}
	switch {
	case w.Live:
		parts = append(parts, "lease LIVE")
	case w.Released:
		parts = append(parts, "released")
	case w.Owner != "":
		parts = append(parts, "lease expired")
	}
	if w.Heartbeat != nil {
		parts = append(parts, "heartbeat "+w.Heartbeat.UTC().Format(time.RFC3339))
	}
	if w.Plan {
		p := "plan.json"
		if w.PlanFingerprint != "" {
			p += " " + shortFingerprint(w.PlanFingerprint)
		}
		parts = append(parts, p)
	}
	if w.SinkKind != "" {
		parts = append(parts, "sink "+w.SinkKind)
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func shortFingerprint(f string) string {
	if len(f) > 19 {
		return f[:19] + "…"
	}
	return f
}

func (t *inspectTable) confs(r *checkpoint.Report) {
	if len(r.Confs) == 0 && len(r.ConfDefaults) == 0 {
		return
	}
	t.printf("\nCONFS (pinned by the offset log: a restart uses these, whatever the session says)\n")
	var rows [][]string
	for _, k := range slices.Sorted(maps.Keys(r.Confs)) {
		rows = append(rows, []string{k, r.Confs[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(r.ConfDefaults)) {
		rows = append(rows, []string{k, r.ConfDefaults[k] + "  (not recorded: Spark's default is forced)"})
	}
	t.table("CONF\tVALUE", rows)
}

func (t *inspectTable) batches(r *checkpoint.Report) {
	if len(r.Batches) == 0 {
		return
	}
	title := fmt.Sprintf("\nBATCHES (%d shown; offsets log holds %d, commit log %d)\n", len(r.Batches), r.OffsetsLog.Count, r.CommitLog.Count)
	t.printf("%s", title)
	var rows [][]string
	for _, b := range r.Batches {
		committed := "no"
		if b.Committed {
			committed = "yes"
		}
		offs := make([]string, 0, len(b.Offsets))
		for _, o := range b.Offsets {
			offs = append(offs, o.Source+": "+offsetText(o.SourceOffset))
		}
		if len(offs) == 0 {
			offs = append(offs, "-")
		}
		rows = append(rows, []string{strconv.FormatInt(b.ID, 10), committed, output.Dash(b.Time), optInt(b.WatermarkMs),
			optInt(b.NextWatermarkMs), strings.Join(offs, "; ")})
	}
	t.table("BATCH\tCOMMITTED\tTIME\tWATERMARK_MS\tNEXT_WATERMARK_MS\tSOURCE OFFSETS", rows)
}

// offsetText is one source offset in a table cell: Kafka per partition.
func offsetText(o checkpoint.SourceOffset) string {
	switch o.Kind {
	case checkpoint.OffsetNone:
		return "- (no offset yet)"
	case checkpoint.OffsetKafka:
		return "kafka " + kafkaText(o.Kafka)
	case checkpoint.OffsetFile:
		if o.LogOffset != nil {
			return fmt.Sprintf("file log offset %d", *o.LogOffset)
		}
	case checkpoint.OffsetLong:
		if o.Value != nil {
			return fmt.Sprintf("long %d", *o.Value)
		}
	case checkpoint.OffsetRate:
		parts := make([]string, 0, len(o.Rate))
		for _, p := range o.Rate {
			s := fmt.Sprintf("value=%d run_time=%s", p.Value, msTime(p.RunTimeMs))
			if p.Partition != nil {
				s = fmt.Sprintf("%d:", *p.Partition) + s
			}
			parts = append(parts, s)
		}
		return "rate " + strings.Join(parts, " ")
	case checkpoint.OffsetDelta, checkpoint.OffsetIceberg:
		return lakeOffsetText(o)
	}
	j := o.JSON
	if len(j) > 80 {
		j = j[:77] + "..."
	}
	return o.Kind + " " + j
}

// kafkaText is Kafka offsets grouped by topic: "topic[0=42 1=7]".
func kafkaText(ps []checkpoint.KafkaPartitionOffset) string {
	var b strings.Builder
	for i, p := range ps {
		switch {
		case i == 0 || ps[i-1].Topic != p.Topic:
			if i > 0 {
				b.WriteString("] ")
			}
			fmt.Fprintf(&b, "%s[%d=%d", p.Topic, p.Partition, p.Offset)
		default:
			fmt.Fprintf(&b, " %d=%d", p.Partition, p.Offset)
		}
	}
	if len(ps) > 0 {
		b.WriteString("]")
	}
	return b.String()
}

func (t *inspectTable) sources(r *checkpoint.Report) {
	if len(r.Sources) == 0 {
		return
	}
	t.printf("\nSOURCES\n")
	var rows [][]string
	for _, s := range r.Sources {
		off := "-"
		if s.Offset != nil {
			off = offsetText(*s.Offset)
		}
		log := "-"
		if l := s.Log; l != nil {
			log = fmt.Sprintf("%s: %d files, %s", l.Dir, l.Files, l.Kind)
			if l.LatestBatch != nil {
				log += fmt.Sprintf(", latest %d", *l.LatestBatch)
			}
			if l.LatestCompact != nil {
				log += fmt.Sprintf(" (compact %d)", *l.LatestCompact)
			}
			if l.Entries > 0 {
				log += fmt.Sprintf(", %d entries", l.Entries)
			}
			if len(l.Initial) > 0 {
				log += ", initial " + kafkaText(l.Initial)
			}
			if l.StartTimeMs != nil {
				log += ", start " + msTime(*l.StartTimeMs)
			}
		}
		rows = append(rows, []string{s.ID, s.Kind, off, log})
	}
	t.table("SOURCE\tKIND\tLATEST OFFSET\tLOG", rows)
}

func (t *inspectTable) state(r *checkpoint.Report) {
	if len(r.Operators) == 0 {
		return
	}
	t.printf("\nSTATE (%s)\n", bytesText(r.StateBytes))
	var rows, parts [][]string
	for _, op := range r.Operators {
		name := output.Dash(op.Name)
		for _, st := range op.Stores {
			var versions []checkpoint.Range
			var required []int64
			ok, puts, dels, decoded := 0, int64(0), int64(0), false
			var files int
			var bytes int64
			for _, p := range st.Partitions {
				versions = append(versions, p.Versions...)
				if !slices.Contains(required, p.RequiredVersion) {
					required = append(required, p.RequiredVersion)
				}
				if p.Rebuildable {
					ok++
				}
				files += p.Files
				bytes += p.Bytes
				for _, d := range p.Details {
					if d.Puts != nil {
						puts += *d.Puts
						decoded = true
					}
					if d.Deletes != nil {
						dels += *d.Deletes
					}
				}
				if t.partitions || !p.Rebuildable || p.Problem != "" {
					from := "-"
					if p.RebuildFrom != nil {
						from = strconv.FormatInt(*p.RebuildFrom, 10)
					}
					parts = append(parts, []string{op.ID, st.Name, strconv.Itoa(p.ID), rangesText(p.Versions),
						strconv.FormatInt(p.RequiredVersion, 10), yesNo(p.Rebuildable), from,
						strconv.Itoa(p.RebuildFiles), bytesText(p.Bytes), output.Dash(p.Problem)})
				}
			}
			rebuild := fmt.Sprintf("%d/%d", ok, len(st.Partitions))
			if ok == len(st.Partitions) && len(st.Partitions) > 0 {
				rebuild = "yes (" + rebuild + ")"
			} else {
				rebuild = "NO (" + rebuild + ")"
			}
			counts := "-"
			if decoded {
				counts = fmt.Sprintf("%d/%d", puts, dels)
			}
			schema := "-"
			if len(st.Schema) > 0 {
				schema = fmt.Sprintf("v%d", st.SchemaVersion)
			}
			req := make([]string, len(required))
			for i, v := range required {
				req[i] = strconv.FormatInt(v, 10)
			}
			rows = append(rows, []string{op.ID, name, op.Provider, st.Name, strconv.Itoa(len(st.Partitions)) + "/" + strconv.Itoa(op.NumPartitions),
				rangesText(checkpoint.MergeRanges(versions)), strings.Join(req, ","), rebuild, counts, schema, strconv.Itoa(files), bytesText(bytes)})
		}
		if len(op.Stores) == 0 {
			rows = append(rows, []string{op.ID, name, op.Provider, "-", "0/" + strconv.Itoa(op.NumPartitions), "-", "-", "-", "-", "-",
				strconv.Itoa(op.Files), bytesText(op.Bytes)})
		}
	}
	t.table("OP\tNAME\tPROVIDER\tSTORE\tPARTITIONS\tVERSIONS\tRESTART_LOADS\tREBUILDABLE\tPUTS/DELETES\tSCHEMA\tFILES\tBYTES", rows)
	for _, op := range r.Operators {
		for _, st := range op.Stores {
			for _, cf := range st.Schema {
				t.printf("  op %s store %s family %s: key %s value %s\n", op.ID, st.Name, cf.Name, structText(cf.KeySchema), structText(cf.ValueSchema))
			}
		}
	}
	if len(parts) > 0 {
		title := "\nSTATE PARTITIONS THAT CANNOT BE REBUILT\n"
		if t.partitions {
			title = "\nSTATE PARTITIONS\n"
		}
		t.printf("%s", title)
		t.table("OP\tSTORE\tPART\tVERSIONS\tRESTART_LOADS\tREBUILDABLE\tFROM\tCHANGE_FILES\tBYTES\tPROBLEM", parts)
	}
}

// structText shortens a Spark StructType JSON to "name type, ...".
func structText(js string) string {
	fields, err := compat.SparkSchemaFields(js)
	if err != nil || len(fields) == 0 {
		if len(js) > 60 {
			return js[:57] + "..."
		}
		return output.Dash(js)
	}
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Name + " " + f.Type
		if f.Nullable != nil && !*f.Nullable {
			parts[i] += " not null"
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

func (t *inspectTable) sink(r *checkpoint.Report) {
	s := r.Sink
	if s == nil {
		return
	}
	t.printf("\nSINK %s: latest batch %s, %d files", s.Dir, optInt(s.LatestBatch), s.Files)
	if s.CompactInterval > 0 {
		t.printf(", compact interval %d", s.CompactInterval)
	}
	if s.CommittedLatestOffsets {
		t.printf("; holds batch L already (a re-run skips it)")
	}
	if o := s.Owner; o != nil {
		t.printf("; owner %s", o)
	}
	t.printf("\n")
}

func (t *inspectTable) findings(r *checkpoint.Report) {
	if len(r.Findings) == 0 {
		t.printf("\nFINDINGS: none\n")
		return
	}
	fs := slices.Clone(r.Findings)
	rank := map[checkpoint.Severity]int{checkpoint.SeverityError: 0, checkpoint.SeverityWarning: 1, checkpoint.SeverityInfo: 2}
	slices.SortStableFunc(fs, func(a, b checkpoint.Finding) int { return rank[a.Severity] - rank[b.Severity] })
	n := map[checkpoint.Severity]int{}
	for _, f := range fs {
		n[f.Severity]++
	}
	t.printf("\nFINDINGS (%d error, %d warning, %d info)\n", n[checkpoint.SeverityError], n[checkpoint.SeverityWarning], n[checkpoint.SeverityInfo])
	var rows [][]string
	for i := 0; i < len(fs); {
		f := fs[i]
		j := i + 1
		for j < len(fs) && fs[j].ID == f.ID && fs[j].Severity == f.Severity {
			j++
		}
		msg := output.Cell(f.Message)
		if f.Next != "" && f.Severity != checkpoint.SeverityInfo {
			msg += ". Next: " + output.Cell(f.Next)
		}
		// A finding repeated for many keys (one per partition) is one
		// line; --format json lists every one.
		if n := j - i; n > 3 {
			msg += fmt.Sprintf(" (and %d more %s findings, the last about %s)", n-1, f.ID, printableKey(fs[j-1].Key))
		} else {
			j = i + 1
		}
		rows = append(rows, []string{strings.ToUpper(string(f.Severity)), f.ID, printableKey(output.Dash(f.Key)), msg})
		i = j
	}
	t.table("SEVERITY\tID\tKEY\tMESSAGE", rows)
}

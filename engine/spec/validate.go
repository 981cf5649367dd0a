package spec

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/ckgate/ckgate/engine/expr"
	"github.com/ckgate/ckgate/gateway"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func bad(field, format string, args ...any) error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// validate checks every field and fills in defaults.
func (s *Spec) validate() error {
	if s.Name == "" {
		return bad("name", "required (a query name such as clickstream-sessions)")
	}
	if !nameRE.MatchString(s.Name) {
		return bad("name", "%q: letters, digits, '.', '_' and '-' only, at most 128", s.Name)
	}
	if err := s.Source.validate(); err != nil {
		return err
	}
	if s.Where != "" {
		if _, err := expr.Parse(s.Where); err != nil {
			return bad("where", "%v", err)
		}
	}
	if s.Operator.Kind == "" {
		s.Operator.Kind = OpNone
	}
	if err := s.Operator.validate(); err != nil {
		return err
	}
	if s.Stateful() && s.EventTime == "" {
		return bad("event_time", "required by operator %s (the field holding each event's time)", s.Operator.Kind)
	}
	switch s.OutputMode {
	case "":
		s.OutputMode = Append
	case Append, Update:
	default:
		return bad("output_mode", "%q: want append or update", s.OutputMode)
	}
	if err := s.Sink.validate(); err != nil {
		return err
	}
	switch {
	case s.Partitions == 0:
		s.Partitions = DefaultPartitions
	case s.Partitions < 0 || s.Partitions > 4096:
		return bad("partitions", "%d: want 1 to 4096", s.Partitions)
	}
	if s.Trigger.Interval == 0 {
		s.Trigger.Interval = Duration(DefaultInterval)
	}
	if s.Trigger.Interval.D() < time.Millisecond {
		return bad("trigger.interval", "%s: want at least 1ms", s.Trigger.Interval)
	}
	switch {
	case s.State.SnapshotEvery == 0:
		s.State.SnapshotEvery = DefaultSnapshotEvery
	case s.State.SnapshotEvery < 0 || s.State.SnapshotEvery > 100000:
		return bad("state.snapshot_every", "%d: want 1 to 100000 versions", s.State.SnapshotEvery)
	}
	switch {
	case s.State.SnapshotRatio == 0:
		s.State.SnapshotRatio = DefaultSnapshotRatio
	case !(s.State.SnapshotRatio > 0 && s.State.SnapshotRatio <= 1000): // NaN too
		return bad("state.snapshot_ratio", "%v: want a finite number from 0 to 1000", s.State.SnapshotRatio)
	}
	return nil
}

// unused refuses fields set for a kind that does not read them.
func unused(kindField, kind string, fields map[string]bool) error {
	names := make([]string, 0, len(fields))
	for n, set := range fields {
		if set {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return bad(names[0], "not used by %s %s", kind, kindField)
}

func (s *Source) validate() error {
	switch s.Kind {
	case "":
		return bad("source.kind", "required: files, rate, kafka or delta")
	case SourceFiles:
		if s.Path == "" {
			return bad("source.path", "required by a files source (a directory or store URL)")
		}
		switch s.Format {
		case "":
			s.Format = "jsonl"
		case "jsonl":
		default:
			return bad("source.format", "%q: want jsonl", s.Format)
		}
		switch {
		case s.MaxFilesPerBatch == 0:
			s.MaxFilesPerBatch = DefaultMaxFilesPerBatch
		case s.MaxFilesPerBatch < 0:
			return bad("source.max_files_per_batch", "%d: want a positive number", s.MaxFilesPerBatch)
		}
		return unused("source", "a files", map[string]bool{
			"source.rows_per_second": s.RowsPerSecond != 0, "source.keys": s.Keys != 0,
			"source.total_rows": s.TotalRows != 0, "source.max_rows_per_batch": s.MaxRowsPerBatch != 0,
			"source.start": s.Start != "", "source.brokers": len(s.Brokers) > 0, "source.topic": s.Topic != "",
			"source.starting_offsets": s.StartingOffsets != "", "source.max_offsets_per_trigger": s.MaxOffsetsPerTrigger != 0,
			"source.starting_version": s.StartingVersion != "",
		})
	case SourceDelta:
		if s.Path == "" {
			return bad("source.path", "required by a delta source (the table's directory or store URL)")
		}
		switch {
		case s.MaxFilesPerBatch == 0:
			s.MaxFilesPerBatch = DefaultMaxFilesPerBatch
		case s.MaxFilesPerBatch < 0:
			return bad("source.max_files_per_batch", "%d: want a positive number", s.MaxFilesPerBatch)
		}
		switch v, err := strconv.ParseInt(s.StartingVersion, 10, 64); {
		case s.StartingVersion == "":
			s.StartingVersion = "latest"
		case s.StartingVersion == "latest":
		case err != nil || v < 0:
			return bad("source.starting_version", "%q: want latest or a version (0 or more)", s.StartingVersion)
		}
		return unused("source", "a delta", map[string]bool{
			"source.format": s.Format != "", "source.rows_per_second": s.RowsPerSecond != 0, "source.keys": s.Keys != 0,
			"source.total_rows": s.TotalRows != 0, "source.max_rows_per_batch": s.MaxRowsPerBatch != 0,
			"source.start": s.Start != "", "source.brokers": len(s.Brokers) > 0, "source.topic": s.Topic != "",
			"source.starting_offsets": s.StartingOffsets != "", "source.max_offsets_per_trigger": s.MaxOffsetsPerTrigger != 0,
		})
	case SourceRate:
		if s.RowsPerSecond <= 0 {
			return bad("source.rows_per_second", "required by a rate source: a positive number")
		}
		if s.RowsPerSecond > MaxRowsPerSecond {
			return bad("source.rows_per_second", "%d: want at most %d", s.RowsPerSecond, MaxRowsPerSecond)
		}
		if s.Keys < 0 {
			return bad("source.keys", "%d: want 0 (no key column) or more", s.Keys)
		}
		if s.TotalRows < 0 {
			return bad("source.total_rows", "%d: want 0 (unbounded) or more", s.TotalRows)
		}
		if s.MaxRowsPerBatch < 0 {
			return bad("source.max_rows_per_batch", "%d: want 0 (no limit) or more", s.MaxRowsPerBatch)
		}
		if s.Start != "" {
			if _, err := time.Parse(time.RFC3339Nano, s.Start); err != nil {
				return bad("source.start", "%q: want an RFC 3339 time such as 2026-01-01T00:00:00Z", s.Start)
			}
		}
		return unused("source", "a rate", map[string]bool{
			"source.path": s.Path != "", "source.format": s.Format != "", "source.max_files_per_batch": s.MaxFilesPerBatch != 0,
			"source.brokers": len(s.Brokers) > 0, "source.topic": s.Topic != "",
			"source.starting_offsets": s.StartingOffsets != "", "source.max_offsets_per_trigger": s.MaxOffsetsPerTrigger != 0,
			"source.starting_version": s.StartingVersion != "",
		})
	case SourceKafka:
		if len(s.Brokers) == 0 {
			return bad("source.brokers", "required by a kafka source (host:port, ...)")
		}
		if s.Topic == "" {
			return bad("source.topic", "required by a kafka source")
		}
		switch s.StartingOffsets {
		case "":
			s.StartingOffsets = "earliest"
		case "earliest", "latest":
		default:
			return bad("source.starting_offsets", "%q: want earliest or latest", s.StartingOffsets)
		}
		if s.MaxOffsetsPerTrigger < 0 {
			return bad("source.max_offsets_per_trigger", "%d: want 0 (no limit) or more", s.MaxOffsetsPerTrigger)
		}
		switch s.Format {
		case "", "jsonl":
			s.Format = "jsonl"
		default:
			return bad("source.format", "%q: want jsonl (one JSON object per record)", s.Format)
		}
		return unused("source", "a kafka", map[string]bool{
			"source.path": s.Path != "", "source.max_files_per_batch": s.MaxFilesPerBatch != 0,
			"source.rows_per_second": s.RowsPerSecond != 0, "source.keys": s.Keys != 0,
			"source.total_rows": s.TotalRows != 0, "source.max_rows_per_batch": s.MaxRowsPerBatch != 0, "source.start": s.Start != "",
		})
	}
	return bad("source.kind", "%q: want files, rate, kafka or delta", s.Kind)
}

func (o *Operator) validate() error {
	for i, k := range o.Keys {
		if k == "" {
			return bad(fmt.Sprintf("operator.keys[%d]", i), "empty field name")
		}
		if slices.Contains(o.Keys[:i], k) {
			return bad(fmt.Sprintf("operator.keys[%d]", i), "%q given twice", k)
		}
	}
	windowed := false
	switch o.Kind {
	case OpNone:
		if len(o.Keys) > 0 {
			return bad("operator.keys", "not used by operator none")
		}
	case OpTumbling:
		if o.Size <= 0 {
			return bad("operator.size", "required by tumbling_window: a window length such as 5m")
		}
		if o.Slide != 0 {
			return bad("operator.slide", "not used by tumbling_window (use sliding_window)")
		}
		windowed = true
	case OpSliding:
		if o.Size <= 0 {
			return bad("operator.size", "required by sliding_window: a window length such as 10m")
		}
		if o.Slide <= 0 {
			return bad("operator.slide", "required by sliding_window: how often a window starts, such as 5m")
		}
		if o.Slide > o.Size {
			return bad("operator.slide", "%s is longer than the window size %s", o.Slide, o.Size)
		}
		if (o.Size.D()+o.Slide.D()-1)/o.Slide.D() > 1000 {
			return bad("operator.slide", "%s makes more than 1000 windows per event for size %s", o.Slide, o.Size)
		}
		windowed = true
	case OpSessionWindow:
		if o.Gap <= 0 {
			return bad("operator.gap", "required by session_window: the inactivity gap such as 30m")
		}
		windowed = true
	case OpDedup:
		if len(o.Keys) == 0 {
			return bad("operator.keys", "required by dedup: the fields that identify a duplicate")
		}
	default:
		return bad("operator.kind", "%q: want none, tumbling_window, sliding_window, session_window or dedup", o.Kind)
	}
	if o.Kind != OpTumbling && o.Kind != OpSliding && o.Size != 0 {
		return bad("operator.size", "not used by %s", o.Kind)
	}
	if o.Kind != OpSliding && o.Kind != OpTumbling && o.Slide != 0 {
		return bad("operator.slide", "not used by %s", o.Kind)
	}
	if o.Kind != OpSessionWindow && o.Gap != 0 {
		return bad("operator.gap", "not used by %s", o.Kind)
	}
	if !windowed {
		if len(o.Aggregates) > 0 {
			return bad("operator.aggregates", "not used by %s", o.Kind)
		}
		return nil
	}
	if len(o.Aggregates) == 0 {
		o.Aggregates = []Aggregate{{Func: AggCount}}
	}
	seen := map[string]bool{}
	for i, a := range o.Aggregates {
		if seen[a.Name()] {
			return bad(fmt.Sprintf("operator.aggregates[%d]", i), "%s given twice", a.Name())
		}
		if slices.Contains(o.Keys, a.Name()) || a.Name() == "window_start" || a.Name() == "window_end" {
			return bad(fmt.Sprintf("operator.aggregates[%d]", i), "output column %s clashes with a key or window column", a.Name())
		}
		seen[a.Name()] = true
	}
	return nil
}

func (s *Sink) validate() error {
	switch s.Kind {
	case "":
		return bad("sink.kind", "required: files, delta, http, console or noop")
	case SinkFiles:
		if s.Path == "" {
			return bad("sink.path", "required by a files sink (a directory or store URL)")
		}
		switch s.Format {
		case "":
			s.Format = "jsonl"
		case "jsonl", "parquet":
		default:
			return bad("sink.format", "%q: want jsonl or parquet", s.Format)
		}
		return unused("sink", "a files", map[string]bool{"sink.url": s.URL != "", "sink.headers": len(s.Headers) > 0,
			"sink.timeout": s.Timeout != 0, "sink.batch_size": s.BatchSize != 0})
	case SinkDelta:
		if s.Path == "" {
			return bad("sink.path", "required by a delta sink (the table's directory or store URL)")
		}
		return unused("sink", "a delta", map[string]bool{"sink.format": s.Format != "", "sink.url": s.URL != "",
			"sink.headers": len(s.Headers) > 0, "sink.timeout": s.Timeout != 0, "sink.batch_size": s.BatchSize != 0})
	case SinkHTTP:
		if s.URL == "" {
			return bad("sink.url", "required by an http sink")
		}
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("sink.url", "%q: want an http:// or https:// URL", gateway.Redact(s.URL))
		}
		if s.Timeout == 0 {
			s.Timeout = Duration(10 * time.Second)
		}
		switch {
		case s.BatchSize == 0:
			s.BatchSize = 500
		case s.BatchSize < 0 || s.BatchSize > 100000:
			return bad("sink.batch_size", "%d: want 1 to 100000 records per request", s.BatchSize)
		}
		return unused("sink", "an http", map[string]bool{"sink.path": s.Path != "", "sink.format": s.Format != ""})
	case SinkConsole, SinkNoop:
		return unused("sink", "a "+s.Kind, map[string]bool{"sink.path": s.Path != "", "sink.format": s.Format != "",
			"sink.url": s.URL != "", "sink.headers": len(s.Headers) > 0, "sink.timeout": s.Timeout != 0, "sink.batch_size": s.BatchSize != 0})
	}
	return bad("sink.kind", "%q: want files, delta, http, console or noop", s.Kind)
}

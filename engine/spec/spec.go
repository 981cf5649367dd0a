// Package spec parses and validates a query spec: the YAML file that says
// what ckgate's engine reads, computes and writes. docs/spec.md documents
// every field; this file is its source of truth.
//
// # Errors
//
// Parse returns an *Error naming the field at fault with its dotted path
// ("operator.gap", "source.max_files_per_batch") and, where YAML knows it,
// the line. Unknown fields are refused, so a typo never silently falls back
// to a default.
package spec

import (
	"time"
)

// Spec is one streaming query.
type Spec struct {
	Name       string    `yaml:"name"`
	Source     Source    `yaml:"source"`
	EventTime  string    `yaml:"event_time"`
	Watermark  Duration  `yaml:"watermark"`
	Where      string    `yaml:"where"`
	Operator   Operator  `yaml:"operator"`
	OutputMode string    `yaml:"output_mode"`
	Sink       Sink      `yaml:"sink"`
	Partitions int       `yaml:"partitions"`
	Trigger    Trigger   `yaml:"trigger"`
	State      StateConf `yaml:"state"`

	// Dir is the directory of the spec file: relative source and sink
	// paths are resolved against it (set by Load, not by YAML).
	Dir string `yaml:"-"`
}

// Source kinds.
const (
	SourceFiles = "files"
	SourceRate  = "rate"
	SourceKafka = "kafka"
	SourceDelta = "delta"
)

// Source says where rows come from.
type Source struct {
	Kind string `yaml:"kind"`

	// files, delta (the table's directory)
	Path             string `yaml:"path"`
	Format           string `yaml:"format"` // jsonl (default)
	MaxFilesPerBatch int    `yaml:"max_files_per_batch"`
	// delta: latest (default: the latest snapshot, then its changes) or a
	// version to read the changes from
	StartingVersion string `yaml:"starting_version"`

	// rate
	RowsPerSecond   int64  `yaml:"rows_per_second"`
	Keys            int64  `yaml:"keys"`       // adds key = value % keys
	TotalRows       int64  `yaml:"total_rows"` // 0: unbounded
	MaxRowsPerBatch int64  `yaml:"max_rows_per_batch"`
	Start           string `yaml:"start"` // RFC 3339 time of row 0 (default: first run's clock)

	// kafka
	Brokers              []string `yaml:"brokers"`
	Topic                string   `yaml:"topic"`
	StartingOffsets      string   `yaml:"starting_offsets"` // earliest (default) | latest
	MaxOffsetsPerTrigger int64    `yaml:"max_offsets_per_trigger"`
}

// Operator kinds.
const (
	OpNone          = "none"
	OpTumbling      = "tumbling_window"
	OpSliding       = "sliding_window"
	OpDedup         = "dedup"
	OpSessionWindow = "session_window"
)

// Operator is the one stateful (or not) step of the query.
type Operator struct {
	Kind       string      `yaml:"kind"`
	Keys       []string    `yaml:"keys"`
	Size       Duration    `yaml:"size"`  // tumbling, sliding
	Slide      Duration    `yaml:"slide"` // sliding
	Gap        Duration    `yaml:"gap"`   // session_window
	Aggregates []Aggregate `yaml:"aggregates"`
}

// Aggregate functions.
const (
	AggCount = "count"
	AggSum   = "sum"
	AggMin   = "min"
	AggMax   = "max"
	AggAvg   = "avg"
)

// Aggregate is "count" or {sum|min|max|avg|count: field}.
type Aggregate struct {
	Func  string
	Field string // "" for count(*)
}

// Name is the output column: "count", "sum_amount", "count_user".
func (a Aggregate) Name() string {
	if a.Field == "" {
		return a.Func
	}
	return a.Func + "_" + a.Field
}

// Output modes.
const (
	Append = "append"
	Update = "update"
)

// Sink kinds.
const (
	SinkFiles   = "files"
	SinkDelta   = "delta"
	SinkHTTP    = "http"
	SinkConsole = "console"
	SinkNoop    = "noop"
)

// Sink says where results go.
type Sink struct {
	Kind   string `yaml:"kind"`
	Path   string `yaml:"path"`   // files, delta (the table's directory)
	Format string `yaml:"format"` // files: jsonl (default) | parquet

	URL       string            `yaml:"url"` // http
	Headers   map[string]string `yaml:"headers"`
	Timeout   Duration          `yaml:"timeout"`
	BatchSize int               `yaml:"batch_size"` // records per POST
}

// Trigger says when batches run.
type Trigger struct {
	Interval     Duration `yaml:"interval"`
	AvailableNow bool     `yaml:"available_now"`
}

// StateConf tunes the state store.
type StateConf struct {
	// SnapshotEvery is K: a partition's chain holds at most K deltas, so
	// a snapshot comes at least every K+1 versions (default 1000).
	SnapshotEvery int `yaml:"snapshot_every"`
	// SnapshotRatio: a snapshot as soon as the deltas since the last one
	// add up to this many times its size (default 2.5; 0 means the default).
	SnapshotRatio float64 `yaml:"snapshot_ratio"`
}

// Defaults.
const (
	DefaultPartitions       = 8
	DefaultMaxFilesPerBatch = 100
	DefaultSnapshotEvery    = 1000
	DefaultSnapshotRatio    = 2.5
	DefaultInterval         = time.Second
	// MaxRowsPerSecond bounds a rate source, so that its row arithmetic
	// (rows = elapsed ms × rate / 1000) cannot overflow.
	MaxRowsPerSecond = 10_000_000
)

// Stateful reports whether the operator keeps state.
func (s *Spec) Stateful() bool { return s.Operator.Kind != OpNone }

package compat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PlanVersion is the PLAN.json version this package reads and writes.
const PlanVersion = 1

// MaxPlanSize is the largest PLAN.json ParsePlan accepts.
const MaxPlanSize = 1 << 20

// Plan is a streaming query as compat compares it: the PLAN.json a user
// writes for a Spark query (see the package documentation), and what a
// checkpoint records (FromCheckpoint) or a ckgate spec says (FromSpec).
type Plan struct {
	Version int    `json:"version"`
	Name    string `json:"name,omitempty"`
	// Sources in the order of the query's sources (the lines of offsets/N).
	Sources []Source `json:"sources"`
	// EventTime is the column the watermark is defined on ("" = none).
	EventTime string `json:"event_time,omitempty"`
	// Watermark is the watermark delay (nil = no watermark).
	Watermark *Duration `json:"watermark,omitempty"`
	// Filters are the query's where/filter conditions, as text.
	Filters []string `json:"filters,omitempty"`
	// Output is the schema the query writes to its sink (its projection).
	Output []Field `json:"output,omitempty"`
	// Operators are the stateful operators, by state/<id>.
	Operators []Operator `json:"operators"`
	// Partitions is the number of state partitions
	// (spark.sql.shuffle.partitions when the query first ran).
	Partitions int        `json:"partitions,omitempty"`
	OutputMode string     `json:"output_mode,omitempty"`
	Sink       *Sink      `json:"sink,omitempty"`
	Confs      ConfValues `json:"confs,omitempty"`
	// StateFormat is ckgate's state layout (engine.StateFormat, "ckgs/1");
	// Spark's state format versions are confs.
	StateFormat string `json:"state_format,omitempty"`

	// unknown names the parts a recorded plan does not know (the
	// checkpoint does not record them): "event_time", "watermark",
	// "filters", "output", "output_mode", "sink", "partitions",
	// "source_options", "sink_options", "state_format", ...
	unknown map[string]string
}

// ConfValues are Spark confs (the state-related ones the offset log pins).
type ConfValues map[string]string

// Source is one input of the query.
type Source struct {
	// Kind: kafka, files, delta, rate, memory, socket, iceberg, or another
	// source's short name.
	Kind string `json:"kind"`
	// Kafka: the subscribed topics, or the subscribe pattern; the topic
	// ids (topic → id, Kafka ≥ 2.8) and the cluster id when known.
	Topics       []string          `json:"topics,omitempty"`
	TopicPattern string            `json:"topic_pattern,omitempty"`
	TopicIDs     map[string]string `json:"topic_ids,omitempty"`
	ClusterID    string            `json:"cluster_id,omitempty"`
	// Files, Delta, Iceberg: the path (URL) read, and its format.
	Path   string `json:"path,omitempty"`
	Format string `json:"format,omitempty"`
	// TableID identifies a table whatever its path: Delta's table id
	// (reservoirId in its offsets), Iceberg's table uuid.
	TableID string `json:"table_id,omitempty"`
	// Options are the source's other options (maxOffsetsPerTrigger,
	// startingOffsets, rowsPerSecond, ...).
	Options map[string]string `json:"options,omitempty"`
}

// Operator is one stateful operator: state/<id>.
type Operator struct {
	// ID is the operator id (state/<id>); nil in PLAN.json means its
	// position in the list.
	ID *int `json:"id,omitempty"`
	// Kind: aggregate, session_window, dedup, dedup_within_watermark,
	// join, flat_map_groups_with_state, transform_with_state, limit.
	Kind string `json:"kind"`
	// Name is Spark's operator name as recorded (stateStoreSave, dedupe,
	// symmetricHashJoin, ...); informational.
	Name string `json:"name,omitempty"`
	// Keys are the grouping, dedup or equi-join keys, in order (a window
	// grouping is a key too: window struct<start:timestamp,end:timestamp>).
	Keys []Field `json:"keys,omitempty"`
	// Aggregates: "count(*)", "sum(amount)", ...
	Aggregates []string `json:"aggregates,omitempty"`
	Window     *Window  `json:"window,omitempty"`
	// JoinType: inner, left_outer, right_outer, full_outer, left_semi.
	JoinType string `json:"join_type,omitempty"`
	// Timeout: flatMapGroupsWithState's timeout (none, processing_time,
	// event_time).
	Timeout string `json:"timeout,omitempty"`
	// Stores are the state schemas: what Spark compares on restart.
	Stores []Store `json:"stores,omitempty"`
}

// Window is a time window: tumbling (size), sliding (size and slide) or
// session (gap).
type Window struct {
	Size  *Duration `json:"size,omitempty"`
	Slide *Duration `json:"slide,omitempty"`
	Gap   *Duration `json:"gap,omitempty"`
}

// Store is the schema of one state store (one column family of it for
// Spark 4's transformWithState).
type Store struct {
	Name   string  `json:"name"`
	Family string  `json:"family,omitempty"` // "" = "default"
	Key    []Field `json:"key"`
	Value  []Field `json:"value,omitempty"`
}

func (s Store) id() string {
	f := s.Family
	if f == "" {
		f = "default"
	}
	if f == "default" {
		return s.Name
	}
	return s.Name + "/" + f
}

// Sink is the query's output.
type Sink struct {
	// Kind: files, kafka, foreach, foreach_batch, console, memory, noop,
	// http, delta, table.
	Kind  string `json:"kind"`
	Path  string `json:"path,omitempty"`  // files, delta
	Topic string `json:"topic,omitempty"` // kafka
	URL   string `json:"url,omitempty"`   // http, redacted (gateway.Redact)
	// URLSHA256 is the SHA-256 of the full http sink URL ("sha256:…"),
	// which tells apart URLs that differ only in a part the redaction hides.
	URLSHA256 string `json:"url_sha256,omitempty"`
	Table     string `json:"table,omitempty"` // table
	Format    string `json:"format,omitempty"`
	// Options are the sink's other options.
	Options map[string]string `json:"options,omitempty"`
}

// Duration is a delay in PLAN.json: a number of milliseconds, a Go
// duration ("10s", "1h30m") or Spark's interval form ("10 seconds").
type Duration int64 // milliseconds

// Ms returns d in milliseconds.
func (d Duration) Ms() int64 { return int64(d) }

func (d Duration) String() string { return (time.Duration(d) * time.Millisecond).String() }

// MarshalJSON writes a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads milliseconds, "10s" or "10 seconds".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var n int64
	if err := json.Unmarshal(b, &n); err == nil {
		if n < 0 {
			return fmt.Errorf("duration %d: negative", n)
		}
		*d = Duration(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration %s: want milliseconds or a string such as \"10s\"", b)
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

var intervalRE = regexp.MustCompile(`^(?i)\s*(?:interval\s+)?(\d+)\s*([a-z]+)\s*$`)

var intervalUnits = map[string]int64{
	"ms": 1, "millisecond": 1, "milliseconds": 1,
	"s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
	"m": 60_000, "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
	"h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
	"d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
	"week": 7 * 86_400_000, "weeks": 7 * 86_400_000,
}

// ParseDuration parses a Go duration ("10s"), Spark's interval form ("10
// seconds", "interval 5 minutes") or a bare number of milliseconds.
func ParseDuration(s string) (Duration, error) {
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && n >= 0 {
		return Duration(n), nil
	}
	if m := intervalRE.FindStringSubmatch(s); m != nil {
		if ms, ok := intervalUnits[strings.ToLower(m[2])]; ok {
			n, err := strconv.ParseInt(m[1], 10, 64)
			if err != nil || n > (1<<62)/ms {
				return 0, fmt.Errorf("duration %q: too long", s)
			}
			return Duration(n * ms), nil
		}
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < 0 {
		return 0, fmt.Errorf("duration %q: want \"10s\", \"10 seconds\" or milliseconds", s)
	}
	return Duration(d.Milliseconds()), nil
}

// Operator kinds.
const (
	KindAggregate            = "aggregate"
	KindSessionWindow        = "session_window"
	KindDedup                = "dedup"
	KindDedupWithinWatermark = "dedup_within_watermark"
	KindJoin                 = "join"
	KindFlatMapGroups        = "flat_map_groups_with_state"
	KindTransformWithState   = "transform_with_state"
	KindLimit                = "limit"
)

var operatorKinds = []string{KindAggregate, KindSessionWindow, KindDedup, KindDedupWithinWatermark, KindJoin,
	KindFlatMapGroups, KindTransformWithState, KindLimit}

// PlanError is a PLAN.json that does not parse or is not valid: the file
// and the JSON path of the field at fault.
type PlanError struct {
	File  string // "" when parsed from bytes
	Field string // "operators[0].keys[1]"; "" for the whole document
	Msg   string
}

func (e *PlanError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ParsePlan parses and validates a PLAN.json. Unknown fields are refused,
// so a typo never silently drops a part of the comparison.
func ParsePlan(data []byte) (*Plan, error) {
	if len(data) > MaxPlanSize {
		return nil, &PlanError{Msg: fmt.Sprintf("%d bytes, more than %d", len(data), MaxPlanSize)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, &PlanError{Msg: jsonErrorText(err)}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &PlanError{Msg: "more than one JSON value"}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

func jsonErrorText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("field %s: %s where %s was expected", te.Field, te.Value, te.Type)
	}
	return "not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
}

func (p *Plan) validate() error {
	bad := func(field, format string, args ...any) error {
		return &PlanError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if p.Version != PlanVersion {
		return bad("version", "%d: this ckgate understands version %d", p.Version, PlanVersion)
	}
	if p.Sources == nil {
		return bad("sources", "missing: list the query's sources (their number and identity are compared)")
	}
	for i, s := range p.Sources {
		f := fmt.Sprintf("sources[%d]", i)
		if s.Kind == "" {
			return bad(f+".kind", "missing")
		}
		if s.TopicPattern != "" {
			if _, err := regexp.Compile(s.TopicPattern); err != nil {
				return bad(f+".topic_pattern", "%v", err)
			}
		}
	}
	if p.Operators == nil {
		p.Operators = []Operator{}
	}
	ids := map[int]bool{}
	for i := range p.Operators {
		o := &p.Operators[i]
		f := fmt.Sprintf("operators[%d]", i)
		if !slices.Contains(operatorKinds, o.Kind) {
			return bad(f+".kind", "%q: want one of %s", o.Kind, strings.Join(operatorKinds, ", "))
		}
		if o.ID == nil {
			o.ID = new(int)
			*o.ID = i
		}
		if *o.ID < 0 {
			return bad(f+".id", "%d: negative", *o.ID)
		}
		if ids[*o.ID] {
			return bad(f+".id", "%d: two operators with this id", *o.ID)
		}
		ids[*o.ID] = true
		stores := map[string]bool{}
		for j, s := range o.Stores {
			if s.Name == "" {
				return bad(fmt.Sprintf("%s.stores[%d].name", f, j), "missing")
			}
			if stores[s.id()] {
				return bad(fmt.Sprintf("%s.stores[%d]", f, j), "store %q listed twice", s.id())
			}
			stores[s.id()] = true
		}
		if w := o.Window; w != nil && w.Size == nil && w.Gap == nil {
			return bad(f+".window", "want size (tumbling, sliding with slide) or gap (session)")
		}
	}
	if p.Partitions < 0 {
		return bad("partitions", "%d: negative", p.Partitions)
	}
	switch p.OutputMode {
	case "", "append", "update", "complete":
	default:
		return bad("output_mode", "%q: want append, update or complete", p.OutputMode)
	}
	if p.Sink != nil && p.Sink.Kind == "" {
		return bad("sink.kind", "missing")
	}
	return nil
}

// Encode returns the plan as indented PLAN.json.
func (p *Plan) Encode() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(p) // a Plan always encodes
	return b.Bytes()
}

// known reports whether the plan knows part (a recorded plan may not).
func (p *Plan) known(part string) bool {
	_, ok := p.unknown[part]
	return !ok
}

// setUnknown marks part as not recorded, with the reason.
func (p *Plan) setUnknown(part, reason string) {
	if p.unknown == nil {
		p.unknown = map[string]string{}
	}
	p.unknown[part] = reason
}

// Unknown returns the parts the plan does not know and why (a plan
// recorded from a checkpoint: Spark does not record its output mode, ...).
func (p *Plan) Unknown() map[string]string { return p.unknown }

func (o Operator) id() int {
	if o.ID == nil {
		return -1
	}
	return *o.ID
}

package compat

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	enginesink "github.com/ckgate/ckgate/engine/sink"
)

// Class is how a difference between the recorded and the proposed query
// is classified, in the terms of Spark's "Recovery Semantics after Changes
// in a Streaming Query".
type Class string

const (
	// Allowed: the restarted query works; what it computes is well defined.
	Allowed Class = "allowed"
	// NotAllowed: the restart fails, or is likely to fail or compute wrong
	// results (Spark: "unpredictable errors"); ckgate's engine refuses it.
	NotAllowed Class = "not_allowed"
	// Undefined: the change can be made, but its effect depends on the
	// query (Spark: "allowed, but the semantics ... depend on ...").
	Undefined Class = "undefined"
)

// Writers of a recorded plan.
const (
	WriterSpark  = "spark"
	WriterCkgate = "ckgate"
)

// Rule ids: each Change names the rule that classified it. They are stable.
const (
	RuleSourceCount    = "source-count"
	RuleSourceKind     = "source-kind"
	RuleSourceIdentity = "source-identity"
	RuleSourceOptions  = "source-options"
	RuleSinkKind       = "sink-kind"
	RuleSinkIdentity   = "sink-identity"
	RuleSinkOptions    = "sink-options"
	RuleFilters        = "filters"
	RuleProjection     = "projection"
	RuleOperatorAdded  = "operator-added"
	RuleOperatorGone   = "operator-removed"
	RuleOperatorKind   = "operator-kind"
	RuleKeys           = "keys"
	RuleStateSchema    = "state-schema"
	RuleAggregates     = "aggregates"
	RuleWindow         = "window"
	RuleJoinType       = "join-type"
	RuleTimeout        = "state-timeout"
	RuleEventTime      = "event-time"
	RuleWatermark      = "watermark"
	RulePartitions     = "partitions"
	RuleOutputMode     = "output-mode"
	RuleConf           = "conf"
	RuleStateFormat    = "state-format"
	RuleSinkFormat     = "sink-format"
)

// Change is one difference between the recorded and the proposed query.
type Change struct {
	Rule     string `json:"rule"`
	Field    string `json:"field"`
	Recorded string `json:"recorded"`
	Proposed string `json:"proposed"`
	Class    Class  `json:"class"`
	Reason   string `json:"reason"`
	// Late is set on a watermark delay change of a stateful query: the
	// event times whose late handling differs.
	Late *LateRange `json:"late,omitempty"`
}

// LateRange is what a watermark delay change does to late rows. With M
// the largest event time seen so far, a row whose event time t is in
// (M − FromLagMs, M − ToLagMs] is dropped as late by the shorter delay
// (its watermark M − ToLagMs is at or past t: Spark's rule) and accepted
// into its window or session by the longer one.
type LateRange struct {
	FromLagMs int64 `json:"from_lag_ms"` // the longer delay
	ToLagMs   int64 `json:"to_lag_ms"`   // the shorter delay
	// FromMs, ToMs are those bounds at the checkpoint's latest batch (M =
	// its watermark + the recorded delay), epoch ms; absent when the
	// checkpoint has no watermark yet.
	FromMs *int64 `json:"from_ms,omitempty"`
	ToMs   *int64 `json:"to_ms,omitempty"`
	// AcceptedBy is "recorded" or "proposed": the query whose delay
	// accepts them (the other drops them as late).
	AcceptedBy string `json:"accepted_by"`
}

// Unchecked is a part of the proposed query that could not be compared:
// the checkpoint does not record it, or the proposal does not say it.
type Unchecked struct {
	Rule   string `json:"rule"`
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// Result is a comparison.
type Result struct {
	Writer string `json:"writer"`
	// Compatible: no change is not_allowed.
	Compatible bool        `json:"compatible"`
	Changes    []Change    `json:"changes"`
	Unchecked  []Unchecked `json:"unchecked"`
	Notes      []string    `json:"notes,omitempty"`
	Recorded   *Plan       `json:"recorded"`
	Proposed   *Plan       `json:"proposed"`
}

// Count returns the number of changes of class c.
func (r *Result) Count(c Class) int {
	n := 0
	for _, ch := range r.Changes {
		if ch.Class == c {
			n++
		}
	}
	return n
}

// Recorded is what a checkpoint records about the query that wrote it.
type Recorded struct {
	*Plan
	// Writer is WriterSpark or WriterCkgate (whose engine enforces
	// _ckgate/plan.json on every restart).
	Writer string
	// WatermarkMs is the watermark of the latest batch (0: none yet).
	WatermarkMs int64
	// Notes are remarks about what was recorded (e.g. where a baseline
	// disagreed with the checkpoint).
	Notes []string
	// NoBatch: a checkpoint ckgate's engine wrote that holds no batch yet
	// (no offsets, commits, source log or state): nothing is built on its
	// plan, and `ckgate run` replaces the plan with the proposal's.
	NoBatch bool
}

// Compare classifies every difference between the query the checkpoint
// records and the proposed one.
func Compare(rec *Recorded, prop *Plan) *Result {
	c := &comparer{rec: rec, prop: prop, ckgate: rec.Writer == WriterCkgate,
		stateful: len(rec.Operators) > 0 || len(prop.Operators) > 0}
	c.sources()
	c.sink()
	c.filters()
	c.projection()
	c.operators()
	c.eventTime()
	c.watermark()
	c.partitions()
	c.outputMode()
	c.stateFormat()
	c.confs()
	r := &Result{Writer: rec.Writer, Compatible: true, Changes: c.changes, Unchecked: c.unchecked,
		Notes: rec.Notes, Recorded: rec.Plan, Proposed: prop}
	if r.Changes == nil {
		r.Changes = []Change{}
	}
	if r.Unchecked == nil {
		r.Unchecked = []Unchecked{}
	}
	if rec.NoBatch && rec.Writer == WriterCkgate {
		for i, ch := range r.Changes {
			if ch.Class == NotAllowed {
				r.Changes[i].Class = Allowed
				r.Changes[i].Reason = "the checkpoint holds no batch yet, so `ckgate run` replaces its recorded plan (otherwise: " + ch.Reason + ")"
			}
		}
		r.Notes = append(r.Notes, "the checkpoint holds no batch yet (no offsets, commits, source log or state): `ckgate run` replaces its recorded plan with this one")
	}
	for _, ch := range r.Changes {
		if ch.Class == NotAllowed {
			r.Compatible = false
		}
	}
	return r
}

type comparer struct {
	rec       *Recorded
	prop      *Plan
	ckgate    bool
	stateful  bool
	changes   []Change
	unchecked []Unchecked
}

func (c *comparer) add(rule, field, rec, prop string, class Class, reason string) {
	c.changes = append(c.changes, Change{Rule: rule, Field: field, Recorded: rec, Proposed: prop, Class: class, Reason: reason})
}

func (c *comparer) skip(rule, field, reason string) {
	c.unchecked = append(c.unchecked, Unchecked{Rule: rule, Field: field, Reason: reason})
}

// unknown reports (once) that the checkpoint does not record part, when
// the proposal says something about it.
func (c *comparer) unknown(rule, part string, proposed bool) bool {
	if c.rec.known(part) {
		return false
	}
	if proposed {
		c.skip(rule, part, c.rec.unknown[part])
	}
	return true
}

const ckgateRefuses = "ckgate's engine refuses a restart whose %s differs from _ckgate/plan.json"

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// --- sources -------------------------------------------------------------

func (c *comparer) sources() {
	if c.unknown(RuleSourceCount, "sources", len(c.prop.Sources) > 0) {
		return
	}
	rs, ps := c.rec.Sources, c.prop.Sources
	if len(rs) != len(ps) {
		c.add(RuleSourceCount, "sources", strconv.Itoa(len(rs)), strconv.Itoa(len(ps)), NotAllowed,
			"changing the number of input sources is not allowed: Spark fails with \"There are [n] sources in the checkpoint offsets and now there are [m] sources\"")
		return
	}
	for i := range rs {
		c.source(fmt.Sprintf("sources[%d]", i), rs[i], ps[i])
	}
}

// recordedKinds is the set of kinds a recorded kind may stand for: Spark's
// offsets do not always say which source wrote them.
var recordedKinds = map[string][]string{
	"long": {"memory", "socket", "rate", "files", "text_socket"}, // LongOffset
}

func normKind(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	switch k {
	case "file", "parquet", "json", "csv", "text", "orc", "jsonl":
		return "files"
	case "foreachbatch", "foreach-batch":
		return "foreach_batch"
	case "textsocket":
		return "socket"
	}
	return k
}

func (c *comparer) source(f string, r, p Source) {
	rk, pk := normKind(r.Kind), normKind(p.Kind)
	switch {
	case rk == "" || rk == "none":
		c.skip(RuleSourceKind, f+".kind", "the checkpoint has no offset for this source yet: its kind is not recorded")
	case rk == pk:
	case slices.Contains(recordedKinds[rk], pk):
		// a long offset: consistent with the proposed kind
	case rk == "unknown":
		c.skip(RuleSourceKind, f+".kind", "the recorded offset is not one this tool decodes: compared by count only")
	default:
		c.add(RuleSourceKind, f+".kind", r.Kind, p.Kind, NotAllowed,
			"changing the type of an input source is not allowed: the recorded offsets belong to another source")
		return
	}
	c.sourceIdentity(f, r, p, pk)
	c.sourceOptions(f, r, p)
}

func (c *comparer) sourceIdentity(f string, r, p Source, kind string) {
	id := func(field, rec, prop, reason string) {
		if c.ckgate {
			reason += "; " + fmt.Sprintf(ckgateRefuses, "source")
		}
		c.add(RuleSourceIdentity, f+"."+field, orNone(rec), orNone(prop), NotAllowed, reason)
	}
	// Kafka: topics, pattern, topic ids, cluster
	if len(r.Topics) > 0 || r.TopicPattern != "" {
		switch {
		case p.TopicPattern != "" && p.TopicPattern == r.TopicPattern:
		case p.TopicPattern != "":
			re, err := regexp.Compile(p.TopicPattern)
			all := err == nil && len(r.Topics) > 0
			for _, t := range r.Topics {
				all = all && re.MatchString(t)
			}
			if all && !c.ckgate {
				c.add(RuleSourceIdentity, f+".topic_pattern", strings.Join(r.Topics, ","), p.TopicPattern, Undefined,
					"the pattern matches every recorded topic, whose offsets carry over; topics it matches later start from startingOffsets")
			} else {
				id("topic_pattern", strings.Join(r.Topics, ",")+r.TopicPattern, p.TopicPattern,
					"changing subscribed topics is not allowed: the pattern does not cover the recorded topics")
			}
		case len(p.Topics) == 0:
			c.skip(RuleSourceIdentity, f+".topics", "the proposal names no topics: the recorded ones are "+strings.Join(r.Topics, ","))
		case !sameSet(r.Topics, p.Topics):
			id("topics", strings.Join(sorted(r.Topics), ","), strings.Join(sorted(p.Topics), ","),
				"changing subscribed topics is not allowed: another topic is another source, even with the same schema")
		}
		for _, t := range sorted(slices.Collect(maps.Keys(r.TopicIDs))) {
			rid, pid := r.TopicIDs[t], p.TopicIDs[t]
			switch {
			case !slices.Contains(p.Topics, t) && p.TopicPattern == "":
			case pid == "":
				c.skip(RuleSourceIdentity, f+".topic_ids."+t, "the recorded topic id is "+rid+"; the proposal does not give one (ckgate compat --resolve asks the brokers)")
			case pid != rid:
				id("topic_ids."+t, rid, pid, "topic "+t+" was deleted and re-created (another topic id): it is another source, its offsets restart")
			}
		}
		switch {
		case r.ClusterID == "":
		case p.ClusterID == "":
			c.skip(RuleSourceIdentity, f+".cluster_id", "the recorded Kafka cluster id is "+r.ClusterID+"; the proposal does not give one (ckgate compat --resolve asks the brokers)")
		case p.ClusterID != r.ClusterID:
			id("cluster_id", r.ClusterID, p.ClusterID, "another Kafka cluster is another source: the recorded offsets mean nothing there")
		}
	}
	// Files, tables: path and table id
	sameTable := r.TableID != "" && r.TableID == p.TableID
	switch {
	case r.TableID == "":
	case p.TableID == "":
		c.skip(RuleSourceIdentity, f+".table_id", "the recorded table id is "+r.TableID+"; the proposal does not give one")
	case !sameTable:
		why := "another table id is another table, even at the same path with the same schema: its versions are unrelated to the recorded offsets"
		if kind == "delta" {
			why += " (Spark refuses the restart: DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE)"
		}
		id("table_id", r.TableID, p.TableID, why)
	}
	if r.Path != "" {
		switch {
		case p.Path == "":
			c.skip(RuleSourceIdentity, f+".path", "the recorded path is "+r.Path+"; the proposal does not give one")
		case samePath(r.Path, p.Path) || coversPath(p.Path, r.Path) && !c.ckgate && kind == "files":
		case sameTable:
			c.add(RuleSourceIdentity, f+".path", r.Path, p.Path, Allowed, "the same table (same table id) at another path")
		default:
			id("path", r.Path, p.Path, "changing the input path is not allowed: another path is another source, even with the same schema (the file source log lists files of the old path)")
		}
	}
	if r.Format != "" && p.Format != "" && !strings.EqualFold(r.Format, p.Format) {
		if c.ckgate {
			id("format", r.Format, p.Format, "the input format is part of the source's identity")
		} else {
			c.add(RuleSourceIdentity, f+".format", r.Format, p.Format, Undefined,
				"the same files read with another format: the files already read are not read again")
		}
	}
}

// Source options whose change Spark's docs allow, by kind of option.
var (
	rateLimitOptions = []string{"maxoffsetspertrigger", "minoffsetspertrigger", "maxtriggerdelay", "maxfilespertrigger",
		"maxbytespertrigger", "max_files_per_batch", "max_offsets_per_trigger", "max_rows_per_batch", "maxrecordspertrigger",
		"rowspermicrobatch", "total_rows"}
	startOptions = []string{"startingoffsets", "startingoffsetsbytimestamp", "startingtimestamp", "startingversion",
		"starting_offsets", "start", "start_ms", "latestfirst", "startingoffsetsbytimestampstrategy"}
	connectionOptions = []string{"kafka.bootstrap.servers", "brokers", "faildataloss", "failondataloss", "kafkaconsumer.polltimeoutms",
		"fetchoffset.numretries", "fetchoffset.retryintervalms", "groupidprefix", "kafka.group.id"}
	// ckgate's rate source records these in its identity.
	ckgateRateIdentity = []string{"rows_per_second", "keys"}
)

func (c *comparer) sourceOptions(f string, r, p Source) {
	if r.Options == nil && len(p.Options) > 0 && !c.ckgate {
		c.skip(RuleSourceOptions, f+".options", "Spark does not record source options")
		return
	}
	// a plan written before ckgate recorded the settings holds only the
	// options that identify the source
	oldCkgate := c.ckgate && !c.rec.known("source_options")
	var notRecorded []string
	for _, k := range sorted(slices.Collect(maps.Keys(unionKeys(r.Options, p.Options)))) {
		rv, rok := r.Options[k]
		pv, pok := p.Options[k]
		if rok && pok && rv == pv {
			continue
		}
		if !rok && oldCkgate {
			notRecorded = append(notRecorded, k)
			continue
		}
		if !rok && r.Options == nil {
			continue // not recorded
		}
		lk := strings.ToLower(k)
		var class Class
		var reason string
		switch {
		case c.ckgate && slices.Contains(ckgateRateIdentity, lk):
			class, reason = NotAllowed, "the rate source's "+k+" fixes which row has which value and time; "+fmt.Sprintf(ckgateRefuses, "source")
		case !pok && c.ckgate && (lk == "start_ms" || lk == "start"):
			continue // the recorded start time is used whatever the spec says
		case lk == "start_ms" || lk == "start":
			class, reason = Allowed, "the recorded start time wins: the source reads it from the checkpoint"
		case slices.Contains(rateLimitOptions, lk):
			class, reason = Allowed, "adding, removing or changing a rate limit is allowed"
		case slices.Contains(startOptions, lk):
			class, reason = Allowed, "used only when the query starts without a checkpoint: a restart continues from the recorded offsets"
		case slices.Contains(connectionOptions, lk):
			class, reason = Allowed, "how the source connects or reacts to data loss, not which data it reads"
		default:
			class, reason = Undefined, "a change of source parameters: whether it is safe depends on the source"
		}
		c.add(RuleSourceOptions, f+".options."+k, optValue(rv, rok), optValue(pv, pok), class, reason)
	}
	if len(notRecorded) > 0 {
		c.skip(RuleSourceOptions, f+".options", c.rec.unknown["source_options"]+": "+strings.Join(notRecorded, ", "))
	}
}

func optValue(v string, ok bool) string {
	if !ok {
		return "(unset)"
	}
	return v
}

// --- sink ----------------------------------------------------------------

func (c *comparer) sink() {
	r, p := c.rec.Sink, c.prop.Sink
	switch {
	case c.unknown(RuleSinkKind, "sink", p != nil):
		return
	case p == nil:
		if r != nil {
			c.skip(RuleSinkKind, "sink", "the proposal does not say its sink")
		}
		return
	case r == nil:
		return
	}
	rk, pk := normKind(r.Kind), normKind(p.Kind)
	if rk != pk {
		class, reason := sinkKindChange(rk, pk)
		if c.ckgate {
			class, reason = NotAllowed, fmt.Sprintf(ckgateRefuses, "sink")
		}
		c.add(RuleSinkKind, "sink.kind", r.Kind, p.Kind, class, reason)
		return
	}
	ident := func(field, rv, pv string, class Class, reason string) {
		if rv == pv || rv == "" && pv == "" {
			return
		}
		if c.ckgate {
			class, reason = NotAllowed, reason+"; "+fmt.Sprintf(ckgateRefuses, "sink")
		}
		c.add(RuleSinkIdentity, "sink."+field, orNone(rv), orNone(pv), class, reason)
	}
	if !samePath(r.Path, p.Path) {
		ident("path", r.Path, p.Path, NotAllowed, "changing the output directory of a file sink is not allowed: its _spark_metadata log records the batches already written")
	}
	ident("topic", r.Topic, p.Topic, Allowed, "changing the Kafka output topic is allowed: new results go to the new topic")
	if !enginesink.SameURL(r.URL, p.URL) {
		ident("url", r.URL, p.URL, Undefined, "another endpoint: what it already received is unknown to it")
	} else if r.URLSHA256 != "" && p.URLSHA256 != "" && r.URLSHA256 != p.URLSHA256 {
		ident("url_sha256", r.URLSHA256, p.URLSHA256, Undefined,
			"the same endpoint but for a hidden part of its URL (user info, a query value or the fragment; a rotated key counts too): what it already received may be unknown to it")
	}
	ident("table", r.Table, p.Table, NotAllowed, "another output table: the recorded batches were committed to the old one")
	if !strings.EqualFold(r.Format, p.Format) {
		ident("format", r.Format, p.Format, Undefined, "the output format changes for new batches; readers must accept both")
	}
	if c.ckgate {
		c.sinkFormat(r.Options, p.Options)
	}
	if r.Options == nil && !c.ckgate || c.ckgate && !c.rec.known("sink_options") {
		if len(p.Options) > 0 {
			reason := "sink options are not recorded"
			if c.ckgate {
				reason = c.rec.unknown["sink_options"]
			}
			c.skip(RuleSinkOptions, "sink.options", reason)
		}
		return
	}
	for _, k := range sorted(slices.Collect(maps.Keys(unionKeys(r.Options, p.Options)))) {
		rv, rok := r.Options[k]
		pv, pok := p.Options[k]
		if rok == pok && rv == pv || k == enginesink.FormatVersionKey {
			continue
		}
		c.add(RuleSinkOptions, "sink.options."+k, optValue(rv, rok), optValue(pv, pok), Undefined,
			"a change of sink parameters: its effect depends on the sink")
	}
}

// sinkFormat reports a parquet sink whose recorded file shape (format
// version; none recorded: 1, times as strings) differs from the one a new
// sink of the proposal gets: ckgate keeps writing the recorded shape to
// the existing sink, so that its files never mix two types in a column.
func (c *comparer) sinkFormat(rec, prop map[string]string) {
	pv, ok := prop[enginesink.FormatVersionKey]
	if !ok {
		return
	}
	rv, rok := rec[enginesink.FormatVersionKey]
	shown := rv
	if !rok {
		rv, shown = enginesink.FormatStringTimes, enginesink.FormatStringTimes+" (none recorded)"
	}
	if rv == pv {
		return
	}
	reason := fmt.Sprintf("the sink's files are format %s; ckgate keeps writing format %s to this sink so that no column mixes two types, "+
		"and a new sink path gets format %s", rv, rv, pv)
	if rv == enginesink.FormatStringTimes {
		reason += " (event times and window bounds as Parquet TIMESTAMP instead of strings)"
	}
	c.add(RuleSinkFormat, "sink.options."+enginesink.FormatVersionKey, shown, pv, Allowed, reason)
}

func sinkKindChange(from, to string) (Class, string) {
	switch {
	case from == "files" && to == "kafka":
		return Allowed, "a file sink changed to a Kafka sink is allowed: Kafka sees only the new data"
	case from == "kafka" && to == "files":
		return NotAllowed, "a Kafka sink changed to a file sink is not allowed"
	case (from == "kafka" || from == "foreach") && (to == "kafka" || to == "foreach"):
		return Allowed, "a Kafka sink changed to foreach, or vice versa, is allowed"
	}
	return Undefined, "changing the type of output sink is allowed case by case: it depends on the sinks (Spark's docs cover file→Kafka, Kafka→file and Kafka↔foreach only)"
}

// --- filters and projection ----------------------------------------------

func (c *comparer) filters() {
	if c.unknown(RuleFilters, "filters", len(c.prop.Filters) > 0) {
		return
	}
	norm := func(fs []string) []string {
		out := make([]string, 0, len(fs))
		for _, f := range fs {
			out = append(out, strings.Join(strings.Fields(f), " "))
		}
		return out
	}
	rf, pf := norm(c.rec.Filters), norm(c.prop.Filters)
	state := ""
	if c.stateful {
		state = "; the state built before the restart keeps what the old filter let through"
	}
	for _, f := range rf {
		if !slices.Contains(pf, f) {
			c.add(RuleFilters, "filters", f, "(removed)", Allowed, "removing a filter is allowed: rows it dropped before are not re-read"+state)
		}
	}
	for _, f := range pf {
		if !slices.Contains(rf, f) {
			c.add(RuleFilters, "filters", "(none)", f, Allowed, "adding a filter is allowed: it applies to new rows"+state)
		}
	}
}

func (c *comparer) projection() {
	if c.unknown(RuleProjection, "output", len(c.prop.Output) > 0) || len(c.prop.Output) == 0 {
		return
	}
	r, p := c.rec.Output, c.prop.Output
	same := len(r) == len(p)
	for i := 0; same && i < len(r); i++ {
		same = r[i].Name == p[i].Name && typeShape(r[i].Type) == typeShape(p[i].Type)
	}
	if same {
		return
	}
	c.add(RuleProjection, "output", fieldsText(r), fieldsText(p), Undefined,
		"a different output schema is allowed only if the sink allows it (projection changes with the same output schema are allowed)")
}

// --- stateful operators --------------------------------------------------

func (c *comparer) operators() {
	if c.unknown(RuleOperatorAdded, "operators", len(c.prop.Operators) > 0) {
		return
	}
	recByID := map[int]Operator{}
	for _, o := range c.rec.Operators {
		recByID[o.id()] = o
	}
	propByID := map[int]Operator{}
	for _, o := range c.prop.Operators {
		propByID[o.id()] = o
	}
	ids := map[int]bool{}
	for id := range recByID {
		ids[id] = true
	}
	for id := range propByID {
		ids[id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		r, rok := recByID[id]
		p, pok := propByID[id]
		f := fmt.Sprintf("operators[id=%d]", id)
		switch {
		case !pok:
			c.add(RuleOperatorGone, f, opText(r), "(removed)", NotAllowed,
				"removing a stateful operator is not allowed: Spark 4 fails with STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA, older versions misbehave (the other operators' state ids shift)")
		case !rok:
			c.add(RuleOperatorAdded, f, "(none)", opText(p), NotAllowed,
				"adding a stateful operator is not allowed: it has no state in the checkpoint (Spark fails with STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY or STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA)")
		default:
			c.operator(f, r, p)
		}
	}
}

func opText(o Operator) string {
	s := o.Kind
	if s == "" {
		s = "stateful operator"
	}
	if o.Name != "" {
		s += " (" + o.Name + ")"
	}
	if len(o.Keys) > 0 {
		s += " by " + fieldsText(o.Keys)
	}
	return s
}

func (c *comparer) operator(f string, r, p Operator) {
	if r.Kind == "" {
		c.skip(RuleOperatorKind, f+".kind", "the checkpoint does not record which operator this is (operator metadata appeared in Spark 4.0); its state schema, where there is one, is compared")
	} else if r.Kind != p.Kind {
		reason := "changing a stateful operator is not allowed: its state is laid out for another operator"
		if c.ckgate {
			reason += "; " + fmt.Sprintf(ckgateRefuses, "stateful plan")
		}
		c.add(RuleOperatorKind, f+".kind", opText(r), opText(p), NotAllowed, reason)
		return
	}
	c.keys(f, r, p)
	c.stores(f, r, p)
	c.aggregates(f, r, p)
	c.window(f, r, p)
	c.simple(RuleJoinType, f+".join_type", r.JoinType, p.JoinType, r.Kind == KindJoin || p.Kind == KindJoin,
		"changing the join type (inner/outer) is not allowed")
	c.simple(RuleTimeout, f+".timeout", r.Timeout, p.Timeout, r.Kind == KindFlatMapGroups || p.Kind == KindFlatMapGroups,
		"changing the timeout type of flatMapGroupsWithState is not allowed")
}

// simple compares a recorded-if-known string property of an operator.
func (c *comparer) simple(rule, f, r, p string, applies bool, reason string) {
	switch {
	case !applies || p == "" || r == p:
	case r == "":
		c.skip(rule, f, "not recorded by the checkpoint")
	default:
		c.add(rule, f, r, p, NotAllowed, reason)
	}
}

// keys compares the grouping/dedup/join keys.
func (c *comparer) keys(f string, r, p Operator) {
	if len(p.Keys) == 0 {
		if len(r.Keys) > 0 && len(p.Stores) == 0 {
			c.skip(RuleKeys, f+".keys", "the proposal does not list the keys: the recorded ones are "+fieldsText(r.Keys))
		}
		return
	}
	if len(r.Keys) == 0 {
		if r.Kind != KindLimit {
			c.skip(RuleKeys, f+".keys", "the checkpoint has no state schema for this operator (Spark ≤ 3.0 wrote none and does not check keys on restart)")
		}
		return
	}
	what := map[string]string{KindDedup: "dedup columns", KindDedupWithinWatermark: "dedup columns", KindJoin: "equi-join columns"}[p.Kind]
	if what == "" {
		what = "grouping keys"
	}
	if c.ckgate {
		rn, pn := fieldNames(r.Keys), fieldNames(p.Keys)
		if !slices.Equal(rn, pn) {
			c.add(RuleKeys, f+".keys", fieldsText(r.Keys), fieldsText(p.Keys), NotAllowed,
				"changing the "+what+" is not allowed: the state is keyed by them; "+fmt.Sprintf(ckgateRefuses, "stateful plan"))
		}
		return
	}
	c.schema(RuleKeys, f+".keys", what, "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE", r.Keys, p.Keys)
}

// schema applies Spark's state schema check (StateSchemaCompatibilityChecker:
// equalsIgnoreNameAndCompatibleNullability) to one key or value schema.
func (c *comparer) schema(rule, f, what, errClass string, r, p []Field) {
	rt, pt := fieldsText(r), fieldsText(p)
	if len(r) != len(p) {
		c.add(rule, f, rt, pt, NotAllowed, fmt.Sprintf("changing the number of %s is not allowed: Spark fails with %s", what, errClass))
		return
	}
	typesGiven, renamed := true, false
	for i := range r {
		if p[i].Type == "" || r[i].Type == "" {
			typesGiven = false
			continue
		}
		if typeShape(r[i].Type) != typeShape(p[i].Type) {
			c.add(rule, f, rt, pt, NotAllowed, fmt.Sprintf("changing the type of %s is not allowed (%s: %s → %s): Spark fails with %s",
				what, fieldLabel(r[i], i), displayType(r[i].Type), displayType(p[i].Type), errClass))
			return
		}
		if p[i].Nullable != nil && *p[i].Nullable && r[i].Nullable != nil && !*r[i].Nullable {
			c.add(rule, f, rt, pt, NotAllowed, fmt.Sprintf("%s is not null in the checkpoint but nullable in the proposal: Spark fails with %s (a nullable field must be nullable in the stored schema)",
				fieldLabel(r[i], i), errClass))
			return
		}
		if r[i].Name != "" && p[i].Name != "" && r[i].Name != p[i].Name {
			renamed = true
		}
	}
	if !typesGiven {
		c.skip(rule, f, "the proposal gives no type for some "+what+": only their number was compared (recorded: "+rt+")")
	}
	if renamed {
		c.add(rule, f, rt, pt, Allowed, "only names differ: Spark ignores field names when it compares state schemas")
	}
}

func fieldLabel(f Field, i int) string {
	if f.Name != "" {
		return f.Name
	}
	return fmt.Sprintf("field %d", i)
}

func fieldNames(fs []Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// stores compares explicit state schemas, store by store.
func (c *comparer) stores(f string, r, p Operator) {
	if len(p.Stores) == 0 {
		return
	}
	if len(r.Stores) == 0 {
		c.skip(RuleStateSchema, f+".stores", "the checkpoint has no state schema files for this operator (Spark ≤ 3.0 wrote none)")
		return
	}
	rs := map[string]Store{}
	for _, s := range r.Stores {
		rs[s.id()] = s
	}
	ps := map[string]Store{}
	for _, s := range p.Stores {
		ps[s.id()] = s
	}
	for _, id := range sorted(slices.Collect(maps.Keys(unionKeys(rs, ps)))) {
		rsv, rok := rs[id]
		psv, pok := ps[id]
		sf := f + ".stores[" + id + "]"
		switch {
		case !pok:
			c.add(RuleStateSchema, sf, "key "+fieldsText(rsv.Key), "(removed)", NotAllowed, "a state store of the operator is gone: the operator changed")
		case !rok:
			c.add(RuleStateSchema, sf, "(none)", "key "+fieldsText(psv.Key), NotAllowed, "a new state store: the operator changed (it has no state in the checkpoint)")
		default:
			c.schema(RuleStateSchema, sf+".key", "key fields", "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE", rsv.Key, psv.Key)
			if len(psv.Value) > 0 || len(rsv.Value) > 0 && psv.Value != nil {
				c.schema(RuleStateSchema, sf+".value", "value fields", "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE", rsv.Value, psv.Value)
			}
		}
	}
}

func normAgg(a string) string {
	a = strings.ToLower(strings.Join(strings.Fields(a), ""))
	if a == "count" || a == "count()" || a == "count(1)" {
		return "count(*)"
	}
	if f, ok := strings.CutPrefix(a, "count_"); ok {
		return "count(" + f + ")"
	}
	return a
}

func (c *comparer) aggregates(f string, r, p Operator) {
	if len(p.Aggregates) == 0 {
		return
	}
	if len(r.Aggregates) == 0 {
		c.skip(RuleAggregates, f+".aggregates", "the checkpoint does not record aggregates by name (Spark keeps their buffers in the state value schema: give stores[].value to compare it)")
		return
	}
	rn, pn := make([]string, len(r.Aggregates)), make([]string, len(p.Aggregates))
	for i, a := range r.Aggregates {
		rn[i] = normAgg(a)
	}
	for i, a := range p.Aggregates {
		pn[i] = normAgg(a)
	}
	if !slices.Equal(rn, pn) {
		reason := "changing the aggregates is not allowed: the state holds their buffers"
		if c.ckgate {
			reason += "; " + fmt.Sprintf(ckgateRefuses, "stateful plan")
		}
		c.add(RuleAggregates, f+".aggregates", strings.Join(rn, ", "), strings.Join(pn, ", "), NotAllowed, reason)
	}
}

func durText(d *Duration) string {
	if d == nil {
		return "(none)"
	}
	return d.String()
}

func (c *comparer) window(f string, r, p Operator) {
	if p.Window == nil && r.Window == nil {
		return
	}
	if r.Window == nil && !c.ckgate {
		if p.Window != nil {
			c.skip(RuleWindow, f+".window", "the checkpoint does not record the window size (it is part of the state key: give the window key's type)")
		}
		return
	}
	rw, pw := r.Window, p.Window
	if rw == nil {
		rw = &Window{}
	}
	if pw == nil {
		pw = &Window{}
	}
	for _, x := range []struct {
		name string
		r, p *Duration
	}{{"size", rw.Size, pw.Size}, {"slide", rw.Slide, pw.Slide}, {"gap", rw.Gap, pw.Gap}} {
		if durText(x.r) == durText(x.p) {
			continue
		}
		reason := "changing the window is not allowed: windows are state keys, the recorded windows would never close as the new ones"
		if c.ckgate {
			reason += "; " + fmt.Sprintf(ckgateRefuses, "stateful plan")
		}
		c.add(RuleWindow, f+".window."+x.name, durText(x.r), durText(x.p), NotAllowed, reason)
	}
}

// --- event time, watermark, partitions, output mode, confs ---------------

func (c *comparer) eventTime() {
	if c.unknown(RuleEventTime, "event_time", c.prop.EventTime != "") {
		return
	}
	r, p := c.rec.EventTime, c.prop.EventTime
	if r == p {
		return
	}
	if !c.stateful {
		c.add(RuleEventTime, "event_time", orNone(r), orNone(p), Allowed, "no stateful operator depends on the event-time column")
		return
	}
	reason := "changing the event-time column of a stateful query is not allowed: the watermark that closes windows and evicts state is computed from it"
	if c.ckgate {
		reason += "; " + fmt.Sprintf(ckgateRefuses, "stateful plan")
	}
	c.add(RuleEventTime, "event_time", orNone(r), orNone(p), NotAllowed, reason)
}

func (c *comparer) watermark() {
	p := c.prop.Watermark
	if !c.rec.known("watermark") {
		switch {
		case p == nil && c.rec.WatermarkMs > 0 && c.stateful:
			c.add(RuleWatermark, "watermark", fmt.Sprintf("set (batch watermark %d ms)", c.rec.WatermarkMs), "(none)", NotAllowed,
				"removing the watermark of a stateful query is not allowed: the recorded state is evicted by it and would grow without bound")
		case p != nil:
			note := c.rec.unknown["watermark"]
			if c.rec.WatermarkMs > 0 {
				note += fmt.Sprintf("; the recorded watermark (%d ms) carries over and never goes down", c.rec.WatermarkMs)
			}
			c.skip(RuleWatermark, "watermark", note)
		}
		return
	}
	r := c.rec.Watermark
	switch {
	case r == nil && p == nil, r != nil && p != nil && *r == *p:
	case !c.stateful:
		c.add(RuleWatermark, "watermark", durText(r), durText(p), Allowed, "no stateful operator uses the watermark: no row is dropped as late")
	case r != nil && p != nil:
		late, reason := lateRange(*r, *p, c.rec.WatermarkMs)
		c.changes = append(c.changes, Change{Rule: RuleWatermark, Field: "watermark", Recorded: r.String(), Proposed: p.String(),
			Class: Undefined, Reason: reason, Late: late})
	default:
		c.add(RuleWatermark, "watermark", durText(r), durText(p), NotAllowed,
			"adding or removing the watermark of a stateful query is not allowed: it decides when state is evicted and what the output modes may emit")
	}
}

// lateRange states what changing the watermark delay from r to p does:
// the event times between the two watermarks (M − the longer delay and
// M − the shorter one, M the largest event time seen) are dropped as late
// by one and accepted by the other. wmMs is the watermark of the latest
// batch (0: none yet), from which M follows (wmMs + r: exact when the
// recorded delay made that watermark, which a restart that changed the
// delay and ran no batch since did not).
func lateRange(r, p Duration, wmMs int64) (*LateRange, string) {
	lr := &LateRange{FromLagMs: max(r, p).Ms(), ToLagMs: min(r, p).Ms(), AcceptedBy: "proposed"}
	if p < r {
		lr.AcceptedBy = "recorded"
	}
	at := ""
	if wmMs > 0 {
		m := wmMs + r.Ms()
		from, to := m-lr.FromLagMs, m-lr.ToLagMs
		lr.FromMs, lr.ToMs = &from, &to
		at = fmt.Sprintf(" (at the latest batch, whose watermark %s puts the largest event time at about %s: after %s up to %s)",
			msTime(wmMs), msTime(m), msTime(from), msTime(to))
	}
	long, short := max(r, p), min(r, p)
	reason := fmt.Sprintf("late rows between max event time − %s and max event time − %s%s are handled differently: ", long, short, at)
	if p > r {
		reason += fmt.Sprintf("the recorded delay (%s) drops them as late, the proposed one (%s) adds them to their window or session; "+
			"the recorded watermark carries over and never goes down, so rows already dropped are not brought back and the first batches after the restart still drop up to the recorded watermark", r, p)
	} else {
		reason += fmt.Sprintf("the recorded delay (%s) adds them to their window or session, the proposed one (%s) drops them as late, "+
			"and closes windows and evicts state %s sooner", r, p, r-p)
	}
	return lr, reason
}

func msTime(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }

// stateFormat compares ckgate's state layout (engine.StateFormat).
func (c *comparer) stateFormat() {
	if c.unknown(RuleStateFormat, "state_format", c.prop.StateFormat != "") || c.prop.StateFormat == "" {
		return
	}
	r, p := c.rec.StateFormat, c.prop.StateFormat
	if r == "" || r == p {
		return // no state recorded: the operator rules say whether one is added
	}
	reason := "the recorded state is in another format, which the proposed query cannot restore"
	if c.ckgate {
		reason += "; " + fmt.Sprintf(ckgateRefuses, "state format")
	}
	c.add(RuleStateFormat, "state_format", r, p, NotAllowed, reason)
}

func (c *comparer) partitions() {
	p := c.prop.Partitions
	if p == 0 {
		if v, err := strconv.Atoi(c.prop.Confs[confShufflePartitions]); err == nil {
			p = v
		}
	}
	if c.unknown(RulePartitions, "partitions", p > 0 && c.stateful) || p == 0 || c.rec.Partitions == 0 {
		return
	}
	if p == c.rec.Partitions {
		return
	}
	class, reason := NotAllowed, fmt.Sprintf("the state is hash-partitioned into %d partitions and cannot be changed after the query has run: ", c.rec.Partitions)
	switch {
	case c.ckgate:
		reason += "ckgate keeps the recorded partitions and ignores the spec's"
	case c.rec.Confs[confShufflePartitions] != "":
		reason += "Spark keeps spark.sql.shuffle.partitions from the offset log and ignores the new value"
	default:
		reason += "the offset log does not pin it (Spark 2.1): the restart fails (state partitions are missing)"
	}
	if !c.stateful {
		class, reason = Allowed, "no state is partitioned: the offset log's value is used for shuffles"
	}
	c.add(RulePartitions, "partitions", strconv.Itoa(c.rec.Partitions), strconv.Itoa(p), class, reason)
}

func (c *comparer) outputMode() {
	if c.unknown(RuleOutputMode, "output_mode", c.prop.OutputMode != "") || c.prop.OutputMode == "" {
		return
	}
	r, p := c.rec.OutputMode, c.prop.OutputMode
	if r == "" || r == p {
		return
	}
	switch {
	case c.ckgate:
		c.add(RuleOutputMode, "output_mode", r, p, NotAllowed, fmt.Sprintf(ckgateRefuses, "stateful plan (output mode)"))
	case c.stateful:
		c.add(RuleOutputMode, "output_mode", r, p, NotAllowed,
			"changing the output mode of a stateful query is not allowed: what the state holds and when rows are emitted and evicted depend on it (transformWithState fails with STATE_STORE_INVALID_CONFIG_AFTER_RESTART)")
	default:
		c.add(RuleOutputMode, "output_mode", r, p, Allowed, "the query has no state: the mode only says how rows are written, if the sink supports it")
	}
}

const (
	confShufflePartitions = "spark.sql.shuffle.partitions"
	confProvider          = "spark.sql.streaming.stateStore.providerClass"
	confWatermarkPolicy   = "spark.sql.streaming.multipleWatermarkPolicy"
	confCheckpointFormat  = "spark.sql.streaming.stateStore.checkpointFormatVersion"
)

// EnforcedConfs are the confs a restart may not change (the conf rule
// classifies a change of any other conf the offset log pins as allowed:
// the recorded value wins).
var EnforcedConfs = []string{confShufflePartitions, confProvider, confWatermarkPolicy, confCheckpointFormat}

func (c *comparer) confs() {
	for _, k := range sorted(slices.Collect(maps.Keys(c.prop.Confs))) {
		pv := c.prop.Confs[k]
		rv, ok := c.rec.Confs[k]
		if !ok || rv == pv || k == confShufflePartitions && c.prop.Partitions == 0 {
			continue
		}
		f := "confs." + k
		switch k {
		case confShufflePartitions:
			// compared by the partitions rule
		case confProvider, confWatermarkPolicy:
			c.add(RuleConf, f, rv, pv, NotAllowed, k+" cannot be changed after the query has run: Spark keeps the offset log's value and ignores the new one")
		case confCheckpointFormat:
			c.add(RuleConf, f, rv, pv, NotAllowed, "the commit log version must equal the checkpoint format version: Spark fails with INVALID_LOG_VERSION.EXACT_MATCH_VERSION")
		default:
			c.add(RuleConf, f, rv, pv, Allowed, "pinned by the offset log: Spark keeps the recorded value and ignores the new one")
		}
	}
}

// --- helpers -------------------------------------------------------------

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Compact(sorted(a)), slices.Compact(sorted(b)))
}

func unionKeys[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// normPath makes file paths comparable: file:/x, file:///x and /x are the
// same; a trailing slash does not matter.
func normPath(p string) string {
	p = strings.TrimSpace(p)
	switch {
	case strings.HasPrefix(p, "file:///"):
		p = p[len("file://"):]
	case strings.HasPrefix(p, "file://localhost/"):
		p = p[len("file://localhost"):]
	case strings.HasPrefix(p, "file:/"):
		p = p[len("file:"):]
	case strings.HasPrefix(p, "s3a://"), strings.HasPrefix(p, "s3n://"):
		p = "s3://" + p[len("s3a://"):]
	}
	return strings.TrimRight(p, "/")
}

func samePath(a, b string) bool { return normPath(a) == normPath(b) }

// coversPath reports whether the directory dir holds path (the recorded
// path is the common directory of the files the source read).
func coversPath(dir, path string) bool {
	d, p := normPath(dir), normPath(path)
	return d != "" && strings.HasPrefix(p, d+"/")
}

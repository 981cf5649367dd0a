package compat

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

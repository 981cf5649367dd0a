package compat

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// How a change of the event time, watermark, state format, partitions,
// output mode and confs is classified.

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

package compat

import (
	"fmt"
	"strings"

	enginesink "github.com/ckgate/ckgate/engine/sink"
)

// How a change of the sink is classified: its kind, identity and options.

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
	for _, k := range UnionKeys(r.Options, p.Options) {
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

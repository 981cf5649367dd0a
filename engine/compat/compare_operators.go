package compat

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// How a change of the stateful operators is classified: kind, keys,
// schemas, stores, aggregates and windows.

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
	for _, id := range UnionKeys(rs, ps) {
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

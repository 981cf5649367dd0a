package compat

import (
	"slices"
	"strings"
)

// How a change of the filters and the projection is classified.

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

package compat

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// WithBaseline completes what the checkpoint records with a baseline: the
// PLAN.json (or spec) of the query that wrote it. The checkpoint wins
// where both say something; the baseline fills in what the checkpoint does
// not record (output mode, sink, filters, watermark delay, source options,
// operator kinds, aggregates, windows). Disagreements become notes.
func WithBaseline(rec *Recorded, base *Plan) *Recorded {
	out := &Recorded{Plan: clonePlan(rec.Plan), Writer: rec.Writer, WatermarkMs: rec.WatermarkMs, Notes: slices.Clone(rec.Notes)}
	p := out.Plan
	note := func(format string, args ...any) {
		out.Notes = append(out.Notes, "baseline: "+fmt.Sprintf(format, args...))
	}
	fill := func(part string, set func()) {
		if !p.known(part) {
			set()
			delete(p.unknown, part)
		}
	}
	fill("event_time", func() { p.EventTime = base.EventTime })
	fill("watermark", func() { p.Watermark = base.Watermark })
	fill("filters", func() { p.Filters = slices.Clone(base.Filters) })
	fill("output", func() { p.Output = slices.Clone(base.Output) })
	fill("output_mode", func() { p.OutputMode = base.OutputMode })
	fill("sink", func() { p.Sink = base.Sink })
	fill("partitions", func() { p.Partitions = base.Partitions })
	fill("state_format", func() { p.StateFormat = base.StateFormat })
	fill("sink_options", func() {
		if p.Sink != nil && base.Sink != nil {
			p.Sink = fillOptions(p.Sink, base.Sink.Options)
		}
	})
	if !p.known("source_options") {
		if len(base.Sources) == len(p.Sources) {
			for i := range p.Sources {
				p.Sources[i].Options = mergeOptions(p.Sources[i].Options, base.Sources[i].Options)
			}
		}
		delete(p.unknown, "source_options")
	}
	if base.Partitions > 0 && p.Partitions > 0 && base.Partitions != p.Partitions {
		note("partitions %d, but the checkpoint records %d: the checkpoint wins", base.Partitions, p.Partitions)
	}
	if !p.known("sources") {
		p.Sources = slices.Clone(base.Sources)
		delete(p.unknown, "sources")
	} else if len(base.Sources) != len(p.Sources) {
		note("%d sources, but the checkpoint records %d: the checkpoint wins", len(base.Sources), len(p.Sources))
	} else {
		for i := range p.Sources {
			p.Sources[i] = mergeSource(p.Sources[i], base.Sources[i], func(f string, args ...any) { note("sources[%d]: "+f, append([]any{i}, args...)...) })
		}
	}
	byID := map[int]Operator{}
	for _, o := range base.Operators {
		byID[o.id()] = o
	}
	for i := range p.Operators {
		r := &p.Operators[i]
		b, ok := byID[r.id()]
		if !ok {
			note("no operator %d, but the checkpoint has state for it", r.id())
			continue
		}
		delete(byID, r.id())
		if r.Kind == "" {
			r.Kind = b.Kind
			if r.Kind == KindSessionWindow {
				r.Keys = primaryKeys(*r)
			}
		} else if b.Kind != r.Kind {
			note("operator %d is %s, but the checkpoint records %s: the checkpoint wins", r.id(), b.Kind, r.Kind)
		}
		if len(r.Keys) == 0 {
			r.Keys = b.Keys
		}
		if len(r.Stores) == 0 {
			r.Stores = b.Stores
		}
		if len(r.Aggregates) == 0 {
			r.Aggregates = b.Aggregates
		}
		if r.Window == nil {
			r.Window = b.Window
		}
		r.JoinType = cmp.Or(r.JoinType, b.JoinType)
		r.Timeout = cmp.Or(r.Timeout, b.Timeout)
	}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		note("operator %d has no state in the checkpoint: ignored", id)
	}
	return out
}

func mergeSource(r, b Source, note func(string, ...any)) Source {
	if normKind(r.Kind) != normKind(b.Kind) && !slices.Contains(recordedKinds[normKind(r.Kind)], normKind(b.Kind)) && r.Kind != "" {
		note("kind %s, but the checkpoint records %s: the checkpoint wins", b.Kind, r.Kind)
		return r
	}
	if r.Kind == "" || recordedKinds[normKind(r.Kind)] != nil {
		r.Kind = b.Kind
	}
	if len(r.Topics) == 0 {
		r.Topics = b.Topics
	} else if len(b.Topics) > 0 && !sameSet(r.Topics, b.Topics) {
		note("topics %v, but the checkpoint records %v: the checkpoint wins", b.Topics, r.Topics)
	}
	r.TopicPattern = cmp.Or(r.TopicPattern, b.TopicPattern)
	if r.TopicIDs == nil {
		r.TopicIDs = b.TopicIDs
	}
	r.ClusterID = cmp.Or(r.ClusterID, b.ClusterID)
	if r.Path == "" {
		r.Path = b.Path
	} else if b.Path != "" && !samePath(r.Path, b.Path) && !coversPath(b.Path, r.Path) {
		note("path %s, but the source log lists files under %s: the checkpoint wins", b.Path, r.Path)
	} else if b.Path != "" {
		r.Path = b.Path // the directory the user named, which covers the files read
	}
	r.Format = cmp.Or(r.Format, b.Format)
	r.TableID = cmp.Or(r.TableID, b.TableID)
	if r.Options == nil {
		r.Options = b.Options
	}
	return r
}

// mergeOptions returns rec with the options of base it does not have.
func mergeOptions(rec, base map[string]string) map[string]string {
	out := maps.Clone(rec)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range base {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}

func fillOptions(s *Sink, base map[string]string) *Sink {
	c := *s
	c.Options = mergeOptions(s.Options, base)
	return &c
}

func clonePlan(p *Plan) *Plan {
	c := *p
	c.Sources = slices.Clone(p.Sources)
	c.Operators = slices.Clone(p.Operators)
	c.unknown = maps.Clone(p.unknown)
	return &c
}

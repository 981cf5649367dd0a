package compat

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine"
	enginesink "github.com/ckgate/ckgate/engine/sink"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// SpecOptions tune FromSpec.
type SpecOptions struct {
	// BaseDir resolves relative source and sink paths, as
	// engine.Options.BaseDir does ("" = the working directory, which is
	// what `ckgate run` uses).
	BaseDir string
}

// FromSpec is the plan of a ckgate spec, with the source and sink
// identities ckgate's engine records in _ckgate/plan.json (canonical URLs
// of paths). A Kafka source's cluster and topic ids need the brokers: see
// ResolveKafka.
func FromSpec(s *spec.Spec, opts SpecOptions) (*Plan, error) {
	p := &Plan{Version: PlanVersion, Name: s.Name, Partitions: s.Partitions, OutputMode: s.OutputMode, Operators: []Operator{}, Filters: []string{}}
	src := Source{Kind: s.Source.Kind, Options: map[string]string{}}
	switch s.Source.Kind {
	case spec.SourceFiles:
		u, err := canonicalURL(s.Source.Path, opts.BaseDir)
		if err != nil {
			return nil, &PlanError{Field: "source.path", Msg: err.Error()}
		}
		src.Path, src.Format = u, "jsonl"
	case spec.SourceDelta:
		u, err := canonicalURL(s.Source.Path, opts.BaseDir)
		if err != nil {
			return nil, &PlanError{Field: "source.path", Msg: err.Error()}
		}
		src.Path = u
	case spec.SourceRate:
		src.Options["rows_per_second"] = strconv.FormatInt(s.Source.RowsPerSecond, 10)
		src.Options["keys"] = strconv.FormatInt(s.Source.Keys, 10)
		if s.Source.Start != "" {
			if ms, err := startMs(s.Source.Start); err == nil {
				src.Options["start_ms"] = strconv.FormatInt(ms, 10)
			}
		}
	case spec.SourceKafka:
		src.Topics = []string{s.Source.Topic}
	}
	p.Sources = []Source{src}
	if s.Stateful() {
		p.EventTime = s.EventTime
	}
	o := s.Operator
	if op := engineOperator(o.Kind, o.Keys, o.Size.Ms(), o.Slide.Ms(), o.Gap.Ms()); op != nil {
		for _, a := range o.Aggregates {
			op.Aggregates = append(op.Aggregates, aggText(a.Func, a.Field))
		}
		p.Operators = append(p.Operators, *op)
	}
	sink := &Sink{Kind: s.Sink.Kind}
	switch s.Sink.Kind {
	case spec.SinkFiles, spec.SinkDelta:
		u, err := canonicalURL(s.Sink.Path, opts.BaseDir)
		if err != nil {
			return nil, &PlanError{Field: "sink.path", Msg: err.Error()}
		}
		sink.Path, sink.Format = u, s.Sink.Format
	case spec.SinkHTTP:
		// As the engine records it: no secret in the plan.
		sink.URL, sink.URLSHA256 = gateway.Redact(s.Sink.URL), enginesink.URLHash(s.Sink.URL)
	}
	p.Sink = sink
	// the watermark, filter, other options and state format, as the
	// engine records them
	applySettings(p, engine.SettingsOf(s))
	return p, nil
}

// canonicalURL mirrors the engine: a relative path is made absolute
// against base (or the working directory), then written as a store URL
// without a trailing slash.
func canonicalURL(raw, base string) (string, error) {
	p := raw
	if !strings.Contains(raw, "://") && !filepath.IsAbs(raw) {
		var err error
		if base == "" {
			p, err = filepath.Abs(raw)
		} else {
			p = filepath.Join(base, raw)
		}
		if err != nil {
			return "", err
		}
	}
	u, err := gateway.ParseURL(p)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// startMs parses a rate source's start time (RFC 3339), as the engine does.
func startMs(s string) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, err
	}
	return t.UnixMilli(), nil
}

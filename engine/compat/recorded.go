package compat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	enginesink "github.com/ckgate/ckgate/engine/sink"
	"github.com/ckgate/ckgate/gateway"
)

// Spark's stateful operator names (StateStoreWriter.shortName, recorded in
// Spark 4's operator metadata) and ckgate's, by kind.
var operatorNames = map[string]string{
	"stateStoreSave":                  KindAggregate,
	"sessionWindowStateStoreSaveExec": KindSessionWindow,
	"dedupe":                          KindDedup,
	"dedupeWithinWatermark":           KindDedupWithinWatermark,
	"symmetricHashJoin":               KindJoin,
	"flatMapGroupsWithState":          KindFlatMapGroups,
	"transformWithStateExec":          KindTransformWithState,
	"transformWithStateInPandasExec":  KindTransformWithState,
	"globalLimit":                     KindLimit,
	// ckgate's engine
	"tumblingWindowAggregate": KindAggregate,
	"slidingWindowAggregate":  KindAggregate,
	"sessionWindowAggregate":  KindSessionWindow,
}

// ckgate's spec operator kinds (engine/spec) as compat kinds.
var specOperatorKinds = map[string]string{
	"tumbling_window": KindAggregate,
	"sliding_window":  KindAggregate,
	"session_window":  KindSessionWindow,
	"dedup":           KindDedupWithinWatermark,
}

const sparkNotRecorded = "Spark does not record it in the checkpoint"

// FromCheckpoint returns what the checkpoint in st records about its
// query: for a checkpoint ckgate's engine wrote, _ckgate/plan.json; for
// Spark's, the sources of the latest offsets (their kind, Kafka topics,
// the files a file source read, Delta's table id), the pinned confs, and
// each stateful operator's metadata and state schemas. rep is st's
// inspection (checkpoint.Inspect).
func FromCheckpoint(ctx context.Context, st gateway.Store, rep *checkpoint.Report) (*Recorded, error) {
	rec := &Recorded{Plan: &Plan{Version: PlanVersion, Sources: []Source{}, Operators: []Operator{}}, Writer: WriterSpark}
	if rep.WatermarkMs != nil {
		rec.WatermarkMs = *rep.WatermarkMs
	}
	rec.Confs = ConfValues{}
	for k, v := range rep.ConfDefaults {
		rec.Confs[k] = v
	}
	for k, v := range rep.Confs {
		rec.Confs[k] = v
	}
	if rep.Writer.Kind == checkpoint.WriterCkgate && rep.Writer.Plan {
		rec.Writer = WriterCkgate
		p, err := checkpoint.ReadPlan(ctx, st)
		if err != nil {
			return nil, err
		}
		ck := FromEnginePlan(p)
		ck.Confs = rec.Confs
		rec.Plan = ck
		if rec.NoBatch, err = engine.HoldsNoBatch(ctx, st); err != nil {
			return nil, err
		}
		return rec, nil
	}
	if rep.Writer.Kind == checkpoint.WriterCkgate {
		rec.Notes = append(rec.Notes, "a ckgate writer record but no _ckgate/plan.json: compared as a Spark checkpoint")
	}
	switch rep.Format.CommitLogVersion {
	case 1, 2:
		if _, ok := rec.Confs[confCheckpointFormat]; !ok {
			rec.Confs[confCheckpointFormat] = strconv.Itoa(rep.Format.CommitLogVersion)
		}
	}
	for _, part := range []string{"event_time", "watermark", "filters", "output", "output_mode", "sink"} {
		rec.setUnknown(part, sparkNotRecorded)
	}
	rec.setUnknown("watermark", "Spark does not record the watermark delay, only each batch's watermark")
	rec.setUnknown("state_format", "Spark records its state format versions as confs of the offset log (compared as confs)")
	if rep.LatestOffsetsBatch == nil {
		rec.setUnknown("sources", "the checkpoint has no offsets yet: its sources are not recorded")
		if len(rep.Operators) == 0 {
			rec.setUnknown("operators", "the checkpoint has no batch yet: no state records its operators")
		}
	}
	for _, s := range rep.Sources {
		src, err := sparkSource(ctx, st, s)
		if err != nil {
			return nil, err
		}
		rec.Sources = append(rec.Sources, src)
	}
	if n, err := strconv.Atoi(rep.Confs[checkpoint.ConfShufflePartitions]); err == nil {
		rec.Partitions = n
	}
	for _, op := range rep.Operators {
		o, err := sparkOperator(op)
		if err != nil {
			return nil, err
		}
		if rec.Partitions == 0 && len(op.Stores) > 0 {
			rec.Partitions = max(rec.Partitions, op.NumPartitions)
		}
		rec.Operators = append(rec.Operators, o)
	}
	if rec.Partitions == 0 {
		rec.setUnknown("partitions", "neither the offset log nor the state records the number of partitions")
	}
	return rec, nil
}

// sparkSource is what a Spark checkpoint says about one source.
func sparkSource(ctx context.Context, st gateway.Store, s checkpoint.Source) (Source, error) {
	src := Source{Kind: s.Kind}
	if s.Offset != nil {
		switch s.Offset.Kind {
		case checkpoint.OffsetFile:
			src.Kind = "files"
		case checkpoint.OffsetKafka:
			src.Kind = "kafka"
			for _, p := range s.Offset.Kafka {
				if !slices.Contains(src.Topics, p.Topic) {
					src.Topics = append(src.Topics, p.Topic)
				}
			}
		case checkpoint.OffsetDelta:
			src.Kind, src.TableID = "delta", s.Offset.Delta.ReservoirID
		case checkpoint.OffsetIceberg:
			src.Kind = "iceberg"
		case checkpoint.OffsetUnknown:
			if id := deltaTableID(s.Offset.JSON); id != "" {
				src.Kind, src.TableID = "delta", id
			}
		}
	}
	if l := s.Log; l != nil {
		switch l.Kind {
		case checkpoint.SourceLogFile:
			src.Kind = "files"
			dir, err := fileSourceDir(ctx, st, l)
			if err != nil {
				return Source{}, err
			}
			src.Path = dir
		case checkpoint.SourceLogKafkaInitial:
			src.Kind = "kafka"
			for _, p := range l.Initial {
				if !slices.Contains(src.Topics, p.Topic) {
					src.Topics = append(src.Topics, p.Topic)
				}
			}
		case checkpoint.SourceLogRateStart:
			src.Kind = "rate"
		}
	}
	slices.Sort(src.Topics)
	return src, nil
}

// deltaTableID returns reservoirId of a Delta source offset.
func deltaTableID(js string) string {
	var o struct {
		ReservoirID string `json:"reservoirId"`
	}
	if json.Unmarshal([]byte(js), &o) != nil {
		return ""
	}
	return o.ReservoirID
}

// fileSourceDir reads the latest file of a file source log and returns the
// directory that holds every file it lists.
func fileSourceDir(ctx context.Context, st gateway.Store, l *checkpoint.SourceLog) (string, error) {
	if l.LatestBatch == nil {
		return "", nil
	}
	compact := l.LatestCompact != nil && *l.LatestCompact == *l.LatestBatch
	key := fmt.Sprintf("%s/%d", l.Dir, *l.LatestBatch)
	if compact {
		key += ".compact"
	}
	entries, err := checkpoint.ReadFileSourceLogFile(ctx, st, key)
	if errors.Is(err, gateway.ErrNotFound) {
		return "", nil // reported by inspect
	}
	if err != nil && gateway.KindOf(err) != nil && !errors.Is(err, gateway.ErrTooLarge) {
		return "", fmt.Errorf("read %s: %w", key, err)
	}
	if err != nil || len(entries) == 0 {
		return "", nil // a corrupt log is inspect's finding; an empty one names no path
	}
	dir := parentDir(entries[0].Path)
	for _, e := range entries[1:] {
		dir = commonDir(dir, parentDir(e.Path))
	}
	return dir, nil
}

func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return p
	}
	return p[:i]
}

func commonDir(a, b string) string {
	for a != b {
		if len(a) > len(b) {
			a = parentDir(a)
		} else {
			b = parentDir(b)
		}
		if !strings.Contains(a, "/") || !strings.Contains(b, "/") {
			if a != b {
				return ""
			}
		}
	}
	return a
}

// sparkOperator is what a Spark checkpoint says about one operator.
func sparkOperator(op checkpoint.Operator) (Operator, error) {
	id, err := strconv.Atoi(op.ID)
	if err != nil {
		return Operator{}, fmt.Errorf("state/%s: operator id is not a number", op.ID)
	}
	o := Operator{ID: &id, Name: op.Name, Kind: operatorNames[op.Name]}
	join := false
	for _, s := range op.Stores {
		if strings.HasPrefix(s.Name, "left-") || strings.HasPrefix(s.Name, "right-") {
			join = true
		}
		for _, cf := range s.Schema {
			key, err := FieldsFromSparkSchema(cf.KeySchema)
			if err != nil {
				return Operator{}, fmt.Errorf("state/%s store %s family %s key: %w", op.ID, s.Name, cf.Name, err)
			}
			value, err := FieldsFromSparkSchema(cf.ValueSchema)
			if err != nil {
				return Operator{}, fmt.Errorf("state/%s store %s family %s value: %w", op.ID, s.Name, cf.Name, err)
			}
			fam := cf.Name
			if fam == "default" {
				fam = ""
			}
			o.Stores = append(o.Stores, Store{Name: s.Name, Family: fam, Key: key, Value: value})
		}
	}
	if o.Kind == "" && join {
		o.Kind = KindJoin
	}
	// Spark 3.2+ session windows: the key ends with the session start
	if o.Kind == "" && len(o.Stores) == 1 {
		if k := o.Stores[0].Key; len(k) > 0 && k[len(k)-1].Name == "sessionStartTime" {
			o.Kind = KindSessionWindow
		}
	}
	o.Keys = primaryKeys(o)
	return o, nil
}

// primaryKeys derives the operator's keys from its state schema: the key
// of its store (aggregation, dedup, flatMapGroupsWithState), the join
// keys (keyToNumValues), a session window's grouping keys (its key without
// the session start), transformWithState's grouping key.
func primaryKeys(o Operator) []Field {
	if len(o.Stores) == 0 {
		return nil
	}
	if o.Kind == KindJoin {
		for _, s := range o.Stores {
			if strings.HasSuffix(s.Name, "-keyToNumValues") {
				return s.Key
			}
		}
	}
	var k []Field
	for _, s := range o.Stores {
		if s.Name == checkpoint.DefaultStore && s.Family == "" {
			k = s.Key
		}
	}
	if k == nil {
		k = o.Stores[0].Key
	}
	if o.Kind == KindSessionWindow && len(k) > 0 {
		k = k[:len(k)-1]
	}
	return k
}

// FromEnginePlan converts ckgate's _ckgate/plan.json. A plan written
// before ckgate recorded its settings (checkpoint.PlanSettings) does not know
// the watermark delay, the where filter, the other source and sink options
// or the state format: those parts are unknown (listed as unchecked when
// the proposal gives them).
func FromEnginePlan(p *checkpoint.EnginePlan) *Plan {
	out := &Plan{Version: PlanVersion, Name: p.Name, Partitions: p.Partitions, OutputMode: p.Stateful.OutputMode,
		EventTime: p.Stateful.EventTime, Operators: []Operator{}}
	out.setUnknown("output", "_ckgate/plan.json does not record the output schema (it follows from the operator, its keys and aggregates, which are compared)")
	out.Sources = []Source{sourceFromIdentity(p.Source)}
	out.Sink = sinkFromIdentity(p.Sink)
	if op := engineOperator(p.Stateful.Operator, p.Stateful.Keys, p.Stateful.SizeMs, p.Stateful.SlideMs, p.Stateful.GapMs); op != nil {
		for _, a := range p.Stateful.Aggregates {
			op.Aggregates = append(op.Aggregates, aggText(a.Func, a.Field))
		}
		out.Operators = append(out.Operators, *op)
	}
	st := p.Settings
	if st == nil {
		const old = "_ckgate/plan.json was written by a ckgate that did not record "
		out.setUnknown("watermark", old+"the watermark delay (the next `ckgate run` records it)")
		out.setUnknown("filters", old+"the where filter (the next `ckgate run` records it)")
		out.setUnknown("source_options", old+"the source options that are not its identity")
		out.setUnknown("sink_options", old+"the sink options that are not its identity")
		out.setUnknown("state_format", old+"the state format")
		return out
	}
	applySettings(out, *st)
	return out
}

// applySettings sets the parts of p that checkpoint.PlanSettings record, as
// FromSpec does for a spec.
func applySettings(p *Plan, st checkpoint.PlanSettings) {
	if st.EventTime != "" {
		d := Duration(st.WatermarkMs)
		p.Watermark = &d
	}
	p.Filters = []string{}
	if st.Where != "" {
		p.Filters = []string{st.Where}
	}
	for i := range p.Sources {
		if p.Sources[i].Options == nil {
			p.Sources[i].Options = map[string]string{}
		}
		maps.Copy(p.Sources[i].Options, st.SourceOptions)
	}
	if p.Sink != nil {
		if p.Sink.Options == nil {
			p.Sink.Options = map[string]string{}
		}
		maps.Copy(p.Sink.Options, st.SinkOptions)
	}
	p.StateFormat = st.StateFormat
}

// engineOperator is the one operator of a ckgate spec (nil when stateless).
func engineOperator(kind string, keys []string, sizeMs, slideMs, gapMs int64) *Operator {
	k, ok := specOperatorKinds[kind]
	if !ok {
		return nil
	}
	op := &Operator{ID: new(int), Kind: k}
	for _, name := range keys {
		op.Keys = append(op.Keys, Field{Name: name})
	}
	ms := func(v int64) *Duration {
		if v <= 0 {
			return nil
		}
		d := Duration(v)
		return &d
	}
	switch kind {
	case "tumbling_window":
		op.Window = &Window{Size: ms(sizeMs)}
	case "sliding_window":
		op.Window = &Window{Size: ms(sizeMs), Slide: ms(slideMs)}
	case "session_window":
		op.Window = &Window{Gap: ms(gapMs)}
	}
	return op
}

func aggText(fn, field string) string {
	if field == "" {
		return fn + "(*)"
	}
	return fn + "(" + field + ")"
}

// sourceFromIdentity converts a ckgate source identity (Source.Identity:
// kind, path, format, topic, topic_id, cluster_id, rows_per_second, ...).
func sourceFromIdentity(id map[string]string) Source {
	s := Source{Kind: id["kind"], Options: map[string]string{}}
	for k, v := range id {
		switch k {
		case "kind":
		case "path":
			s.Path = v
		case "format":
			s.Format = v
		case "topic":
			s.Topics = []string{v}
		case "topic_id":
			if t := id["topic"]; t != "" && v != "" {
				s.TopicIDs = map[string]string{t: v}
			}
		case "cluster_id":
			s.ClusterID = v
		default:
			s.Options[k] = v
		}
	}
	return s
}

// sinkFromIdentity converts a ckgate sink identity (kind, path, format, url).
func sinkFromIdentity(id map[string]string) *Sink {
	if id == nil {
		return nil
	}
	// A plan written before the allowlist redactor may hold a secret in its
	// URL: redacted again here, never shown.
	s := &Sink{Kind: id["kind"], Path: id["path"], Format: id["format"], URL: gateway.Redact(id["url"]),
		URLSHA256: id[enginesink.URLHashKey], Options: map[string]string{}}
	for k, v := range id {
		switch k {
		case "kind", "path", "format", "url", enginesink.URLHashKey:
		default:
			s.Options[k] = v
		}
	}
	return s
}

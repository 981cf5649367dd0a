package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/operator"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/source"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// sampleRows is how many rows of the first batch the pre-flight of a spec
// reads.
const sampleRows = 1000

// FieldError is a field the spec relies on (the event time, an operator
// key) that no row of a batch has: every row would be dropped as a bad
// event time, or fall into one null-keyed group, so the run stops instead.
type FieldError struct {
	Spec  string // the spec field naming it: "event_time", "operator.keys"
	Name  string // the row field
	Time  bool   // an event-time field: a row needs a valid time in it
	Rows  int64  // rows looked at
	Input string // one input those rows came from
	Batch int64  // the batch; -1 for the pre-flight of the first batch
	// Fields are the only fields a generating source's rows hold (the
	// rate source's), when the spec was checked against them.
	Fields []string
}

func (e *FieldError) Error() string {
	has, loss := "has it", "fall into one group whose key is null"
	if e.Time {
		has, loss = "has a valid event time in it (RFC 3339 or epoch milliseconds)", `be dropped as "bad event time"`
	}
	sample := ""
	if e.Input != "" {
		sample = " (e.g. " + gateway.Redact(e.Input) + ")"
	}
	if len(e.Fields) > 0 {
		return fmt.Sprintf("%s %q: the rows of the rate source hold only %s: every row would %s; fix the spec and run again (nothing was written)",
			e.Spec, e.Name, strings.Join(e.Fields, ", "), loss)
	}
	if e.Batch < 0 {
		return fmt.Sprintf("%s %q: none of the first %d rows of the first batch %s%s: every row would %s; "+
			"fix the spec and run again (nothing was written: the checkpoint holds no batch, so the corrected spec starts it)",
			e.Spec, e.Name, e.Rows, has, sample, loss)
	}
	return fmt.Sprintf("batch %d: %s %q: none of its %d rows %s%s: ckgate stops rather than let every row %s; "+
		"the batch stays in flight: fix those inputs, then run again (a restart re-runs it with the same inputs)",
		e.Batch, e.Spec, e.Name, e.Rows, has, sample, loss)
}

// keyChecks tracks, for each operator key, whether a row of the batch had
// it (not absent, not null).
type keyChecks struct {
	names  []string
	fields []*row.Field
	have   []bool
	left   int // keys no row had yet
}

func newKeyChecks(s *spec.Spec) *keyChecks {
	k := &keyChecks{names: s.Operator.Keys, have: make([]bool, len(s.Operator.Keys)), left: len(s.Operator.Keys)}
	for _, n := range k.names {
		k.fields = append(k.fields, row.NewField(n))
	}
	return k
}

// see notes the keys r has; once every key was seen it costs nothing.
func (k *keyChecks) see(r *row.Row) {
	if k.left == 0 {
		return
	}
	for i, f := range k.fields {
		if !k.have[i] {
			if v := f.Ref(r); v != nil && !v.IsNull() {
				k.have[i] = true
				k.left--
			}
		}
	}
}

// missing is the first key no row had, "" when every one was seen.
func (k *keyChecks) missing() string {
	for i, ok := range k.have {
		if !ok {
			return k.names[i]
		}
	}
	return ""
}

// hasEventTime reports whether r has a usable event time in f (as the
// batch loop reads it).
func hasEventTime(f *row.Field, r *row.Row) bool {
	v := f.Ref(r)
	if v == nil {
		return false
	}
	_, ok := operator.EventTime(*v)
	return ok
}

// checkSpec is the pre-flight of the spec, before anything is written: a
// files source's path must exist (it is never created), and, while the
// checkpoint holds no batch, the event-time field and the operator keys
// are checked against the first rows of the first batch: a field no row
// has is a *FieldError.
func (q *Query) checkSpec(ctx context.Context) error {
	s := q.spec
	if s.Source.Kind == spec.SourceRate {
		names := source.RateFields(s)
		if s.EventTime != "" && !slices.Contains(names, s.EventTime) {
			return &FieldError{Spec: "event_time", Name: s.EventTime, Time: true, Batch: -1, Fields: names}
		}
		for _, k := range s.Operator.Keys {
			if !slices.Contains(names, k) {
				return &FieldError{Spec: "operator.keys", Name: k, Batch: -1, Fields: names}
			}
		}
		return nil
	}
	if s.Source.Kind != spec.SourceFiles {
		return nil
	}
	L, err := latestID(ctx, q.opts.Checkpoint, checkpoint.OffsetsDir)
	if err != nil {
		return err
	}
	env := source.Env{Checkpoint: q.opts.Checkpoint, Dir: "sources/0", Open: q.openInput, Now: q.opts.Now,
		CreateEntry: func(context.Context, string, []byte) (gateway.Entry, error) {
			return gateway.Entry{}, errors.New("engine: the pre-flight of a spec writes nothing")
		}}
	src, err := source.New(ctx, s, env)
	if err != nil {
		return err
	}
	defer src.Close()
	sm, ok := src.(source.Sampler)
	if !ok || L >= 0 {
		return nil
	}
	keys := newKeyChecks(s)
	tf := row.NewField(s.EventTime)
	var rows int64
	var first, timed string
	err = sm.Sample(ctx, "", sampleRows, func(input string, r *row.Row) error {
		rows++
		if first == "" {
			first = input
		}
		if s.EventTime != "" && timed == "" && hasEventTime(tf, r) {
			timed = input
		}
		keys.see(r)
		return nil
	})
	if err != nil || rows == 0 {
		return err
	}
	if s.EventTime != "" && timed == "" {
		return &FieldError{Spec: "event_time", Name: s.EventTime, Time: true, Rows: rows, Input: first, Batch: -1}
	}
	if k := keys.missing(); k != "" {
		return &FieldError{Spec: "operator.keys", Name: k, Rows: rows, Input: first, Batch: -1}
	}
	return nil
}

// checkBatchFields fails batch b when every one of its in rows lacked a
// valid event time (invalid == in) or an operator key.
func (q *Query) checkBatchFields(ctx context.Context, b *logged, in, invalid int64, keys *keyChecks) error {
	if in == 0 {
		return nil
	}
	e := &FieldError{Rows: in, Batch: b.batch}
	switch k := keys.missing(); {
	case q.spec.EventTime != "" && invalid == in:
		e.Spec, e.Name, e.Time = "event_time", q.spec.EventTime, true
	case k != "":
		e.Spec, e.Name = "operator.keys", k
	default:
		return nil
	}
	if il, ok := q.src.(source.Inputs); ok {
		if inputs, err := il.Inputs(ctx, b.start, b.end); err == nil && len(inputs) > 0 {
			e.Input = inputs[0]
		}
	}
	return e
}

// openInput opens a source location, which must exist: a typo'd path is
// refused, never created (on a cloud store a prefix exists once it holds
// an object, so an empty one is just empty; its bucket must exist).
func (q *Query) openInput(ctx context.Context, raw string) (gateway.Store, string, error) {
	st, u, err := q.openStore(ctx, raw)
	if err != nil {
		return nil, "", err
	}
	for _, err := range st.List(ctx, "") {
		if errors.Is(err, gateway.ErrNotFound) {
			gateway.Close(st)
			return nil, "", fmt.Errorf("%s does not exist: ckgate never creates a source directory; check the spec's source.path (nothing was written): %w",
				gateway.Redact(u), err)
		}
		break // listable, or an error the source reports when it lists
	}
	return st, u, nil
}

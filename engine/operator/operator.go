// Package operator holds the engine's operators: none (map/filter only),
// tumbling_window and sliding_window aggregation, session_window, and dedup.
// The stateful ones keep their state in memory, partitioned by a hash of
// the group key, and hand the engine the changed entries of each batch so
// it can write them to the state store (package state).
//
// # Semantics (Spark's)
//
// The engine gives each batch a watermark wm and drops events at or below
// it before they reach an operator. In append mode a window or session is
// emitted once, when wm reaches its end (end <= wm), and then removed; in
// update mode every window or session a batch changed is emitted at the end
// of that batch, and state is removed silently once wm reaches its end. A
// session is [first event, last event + gap); an event joins a session when
// it falls before the session's end, and an event that bridges two
// sessions merges them. dedup emits the first row of each key and drops the
// others until wm passes that row's event time plus the watermark delay.
//
// Output rows of aggregations are: the key fields, window_start, window_end
// (RFC 3339 UTC with milliseconds), then one column per aggregate (count,
// sum_amount, ...). Output order is deterministic: partitions in order,
// state keys ascending within each; none and dedup keep input order.
package operator

import (
	"fmt"
	"math"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/engine/state"
)

// Operator processes the rows of one batch.
type Operator interface {
	// Name is the operator name recorded in the state metadata.
	Name() string
	// Stateful reports whether the operator keeps state.
	Stateful() bool
	// Add takes one row whose event time ts is above the batch watermark.
	// The row is only valid during the call.
	Add(ts int64, r *row.Row)
	// Finish ends the batch at watermark wm: it emits the output rows and
	// returns, per partition, the state changes (keys ascending).
	Finish(wm int64, emit func(*row.Row)) [][]state.Change
	// Restore applies one record read from the state store to partition p.
	Restore(p int, c state.Change) error
	// Snapshot yields every entry of partition p, keys ascending.
	Snapshot(p int, add func(state.Change))
	// Stats returns the state counters.
	Stats() Stats
}

// Reserver is implemented by operators that can size partition p for n
// entries before a restore.
type Reserver interface {
	Reserve(p, n int)
}

// Stats are the counters of a stateful operator (Spark's stateOperators).
type Stats struct {
	NumRowsTotal       int64 `json:"numRowsTotal"`
	NumRowsUpdated     int64 `json:"numRowsUpdated"`
	NumRowsRemoved     int64 `json:"numRowsRemoved"`
	NumRowsDroppedDups int64 `json:"numDroppedDuplicateRows,omitempty"`
}

// Config is what New needs beyond the spec.
type Config struct {
	Partitions int
}

// New builds the operator of s.
func New(s *spec.Spec, c Config) (Operator, error) {
	if c.Partitions <= 0 {
		return nil, fmt.Errorf("operator: %d partitions", c.Partitions)
	}
	o := s.Operator
	base := newKeyed(o.Keys, c.Partitions)
	switch o.Kind {
	case spec.OpNone:
		return &none{}, nil
	case spec.OpTumbling:
		return newWindow(base, o.Size.Ms(), o.Size.Ms(), o.Aggregates, s.OutputMode), nil
	case spec.OpSliding:
		return newWindow(base, o.Size.Ms(), o.Slide.Ms(), o.Aggregates, s.OutputMode), nil
	case spec.OpSessionWindow:
		return newSession(base, o.Gap.Ms(), o.Aggregates, s.OutputMode), nil
	case spec.OpDedup:
		return newDedup(base, s.Watermark.Ms()), nil
	}
	return nil, fmt.Errorf("operator.kind %q: unknown", o.Kind)
}

// keyed is what the keyed operators share: key fields and partitioning.
// partMaps is one empty map per partition: a keyed operator's groups.
func partMaps[V any](parts int) []map[string]V {
	m := make([]map[string]V, parts)
	for i := range m {
		m[i] = map[string]V{}
	}
	return m
}

// noneYet is one math.MaxInt64 per partition: the earliest expiry (or
// window end) of a partition that holds nothing yet.
func noneYet(parts int) []int64 {
	t := make([]int64, parts)
	for i := range t {
		t[i] = math.MaxInt64
	}
	return t
}

type keyed struct {
	keys   []string
	fields []*row.Field
	parts  int
	buf    []byte
}

func newKeyed(keys []string, parts int) keyed {
	k := keyed{keys: keys, parts: parts}
	for _, n := range keys {
		k.fields = append(k.fields, row.NewField(n))
	}
	return k
}

// groupKey encodes the key fields of r into k.buf and returns it with its
// partition. The partition is a stable hash (FNV-1a) of the encoding, so it
// is the same in every process.
func (k *keyed) groupKey(r *row.Row) ([]byte, int) {
	b := k.buf[:0]
	for _, f := range k.fields {
		b = f.Get(r).AppendKey(b)
	}
	k.buf = b
	return b, partitionOf(b, k.parts)
}

// partitionOfInt is partitionOf(IntV(k).AppendKey(nil), parts) without
// building the bytes.
func partitionOfInt(k int64, parts int) int {
	if parts == 1 {
		return 0
	}
	h := uint64(14695981039346656037)
	h ^= uint64(row.Int)
	h *= 1099511628211
	for shift := 56; shift >= 0; shift -= 8 {
		h ^= uint64(byte(uint64(k) >> shift))
		h *= 1099511628211
	}
	return int(h % uint64(parts))
}

// Partition returns the partition of an encoded group key (FNV-1a modulo
// parts): the same in every process and every run.
func Partition(b []byte, parts int) int { return partitionOf(b, parts) }

func partitionOf(b []byte, parts int) int {
	if parts == 1 {
		return 0
	}
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return int(h % uint64(parts))
}

// none passes rows through.
type none struct {
	out []row.Row
}

func (*none) Name() string   { return "none" }
func (*none) Stateful() bool { return false }
func (n *none) Add(_ int64, r *row.Row) {
	n.out = append(n.out, r.Clone())
}
func (n *none) Finish(_ int64, emit func(*row.Row)) [][]state.Change {
	for i := range n.out {
		emit(&n.out[i])
	}
	n.out = n.out[:0]
	return nil
}
func (*none) Restore(int, state.Change) error  { return fmt.Errorf("operator none has no state") }
func (*none) Snapshot(int, func(state.Change)) {}
func (*none) Stats() Stats                     { return Stats{} }

package operator

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/engine/state"
)

// window is tumbling (slide == size) and sliding window aggregation. A
// state entry is one (group key, window): key = group key encoding, then
// the window start as 8 bytes big-endian with the sign bit flipped (so keys
// sort by start); value = the accumulators.
//
// Entries of a single integer key (the common case, and the benchmark's)
// live in one map indexed by (key, start), the way a hand-written loop
// would index them; their state key is built only when needed. Other
// entries live in a map per partition indexed by the state key.
type window struct {
	keyed
	size, slide int64
	aggs        []aggFunc
	update      bool
	countOnly   bool  // a single count(*): touch just counts
	lastStart   int64 // floor(ts/slide)·slide of the last row Add saw
	names       []string
	parts       []map[string]*win // generic entries, per partition
	minEnd      []int64           // of the generic entries, per partition
	fast        *winTable         // single integer key entries, all partitions
	fastMinEnd  int64
	dirty       [][]*win
	kbuf        []byte
	slab        []win
	stats       Stats
}

type win struct {
	// what a row touches first, so it shares a cache line
	dirty bool
	fast  bool
	accs  []acc
	one   [1]acc // accs of a single aggregate, allocated with the window
	key   string // state key; "" for a fast entry until needed
	start int64
	ik    intWin
	p     int
}

// intWin indexes the windows of a single integer key without building the
// state key.
type intWin struct{ key, start int64 }

func newWindow(k keyed, size, slide int64, aggs []spec.Aggregate, mode string) *window {
	w := &window{keyed: k, size: size, slide: slide, aggs: compileAggs(aggs), update: mode == spec.Update}
	w.countOnly = len(w.aggs) == 1 && w.aggs[0].field == ""
	w.names = outputNames(k.keys, aggs)
	w.parts = partMaps[*win](k.parts)
	w.minEnd = noneYet(k.parts)
	w.fastMinEnd = math.MaxInt64
	if len(k.keys) == 1 {
		w.fast = newWinTable(0)
	}
	w.dirty = make([][]*win, k.parts)
	return w
}

func outputNames(keys []string, aggs []spec.Aggregate) []string {
	names := append(append([]string{}, keys...), "window_start", "window_end")
	for _, a := range aggs {
		names = append(names, a.Name())
	}
	return names
}

func (w *window) Name() string {
	if w.size == w.slide {
		return "tumblingWindowAggregate"
	}
	return "slidingWindowAggregate"
}
func (w *window) Stateful() bool { return true }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func appendStart(b []byte, start int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(start)^(1<<63))
}

func (w *window) newWin(key string, start int64) *win {
	// windows come from slabs: one allocation per 256 windows (a slab lives
	// until its last window is evicted)
	if len(w.slab) == 0 {
		w.slab = make([]win, 256)
	}
	e := &w.slab[0]
	w.slab = w.slab[1:]
	e.key, e.start = key, start
	if len(w.aggs) == 1 {
		e.accs = e.one[:]
	} else {
		e.accs = make([]acc, len(w.aggs))
	}
	return e
}

// stateKey returns (and caches) e's state key.
func (w *window) stateKey(e *win) string {
	if e.key == "" {
		w.kbuf = appendStart(row.IntV(e.ik.key).AppendKey(w.kbuf[:0]), e.start)
		e.key = string(w.kbuf)
	}
	return e.key
}

func (w *window) touch(e *win, r *row.Row) {
	if w.countOnly {
		e.one[0].n++
	} else {
		for i := range w.aggs {
			w.aggs[i].add(&e.accs[i], r)
		}
	}
	if !e.dirty {
		e.dirty = true
		w.dirty[e.p] = append(w.dirty[e.p], e)
	}
}

func (w *window) Add(ts int64, r *row.Row) {
	// the last window start at or before ts: rows come mostly in time
	// order, so the previous row's usually holds
	if d := ts - w.lastStart; ts < w.lastStart || d < 0 || d >= w.slide { // d < 0: it wrapped
		w.lastStart = floorDiv(ts, w.slide) * w.slide
	}
	last := w.lastStart
	if w.fast != nil {
		if v := w.fields[0].Ref(r); v != nil && v.K == row.Int {
			for start := last; start > ts-w.size; start -= w.slide {
				ik := intWin{v.I, start}
				e := w.fast.Get(ik)
				if e == nil {
					e = w.newWin("", start)
					e.fast, e.ik, e.p = true, ik, partitionOfInt(v.I, w.keyed.parts)
					w.fast.Put(ik, e)
					w.fastMinEnd = min(w.fastMinEnd, start+w.size)
				}
				w.touch(e, r)
			}
			return
		}
	}
	gk, p := w.groupKey(r)
	m := w.parts[p]
	for start := last; start > ts-w.size; start -= w.slide {
		w.kbuf = appendStart(append(w.kbuf[:0], gk...), start)
		e := m[string(w.kbuf)]
		if e == nil {
			e = w.newWin(string(w.kbuf), start)
			e.p = p
			m[e.key] = e
			w.minEnd[p] = min(w.minEnd[p], start+w.size)
		}
		w.touch(e, r)
	}
}

func (w *window) output(e *win, emit func(*row.Row)) {
	vals, _, err := row.DecodeKeys([]byte(w.stateKey(e)), len(w.keys))
	if err != nil {
		panic(fmt.Sprintf("window state key %x: %v", e.key, err)) // keys are built by Add or checked by Restore
	}
	vals = append(vals, row.StrV(FormatTime(e.start)), row.StrV(FormatTime(e.start+w.size)))
	for i, a := range w.aggs {
		vals = append(vals, a.result(&e.accs[i]))
	}
	emit(&row.Row{Names: w.names, Vals: vals})
}

func (w *window) held(e *win) bool {
	if e.fast {
		return w.fast.Get(e.ik) == e
	}
	return w.parts[e.p][e.key] == e
}

func (w *window) byKey(a, b *win) int { return strings.Compare(w.stateKey(a), w.stateKey(b)) }

func (w *window) Finish(wm int64, emit func(*row.Row)) [][]state.Change {
	out := make([][]state.Change, len(w.parts))
	w.stats.NumRowsUpdated, w.stats.NumRowsRemoved = 0, 0
	evicted := make([][]*win, len(w.parts))
	if w.fast != nil && wm >= w.fastMinEnd {
		minEnd := int64(math.MaxInt64)
		var gone []intWin
		w.fast.All(func(k intWin, e *win) {
			if end := e.start + w.size; end <= wm {
				evicted[e.p] = append(evicted[e.p], e)
				gone = append(gone, k)
			} else {
				minEnd = min(minEnd, end)
			}
		})
		if len(gone) > w.fast.Len()/2 {
			// most entries go: rebuild from the ones that stay
			keep := newWinTable(w.fast.Len() - len(gone))
			w.fast.All(func(k intWin, e *win) {
				if e.start+w.size > wm {
					keep.Put(k, e)
				}
			})
			w.fast = keep
		} else {
			for _, k := range gone {
				w.fast.Delete(k)
			}
		}
		w.fastMinEnd = minEnd
	}
	for p, m := range w.parts {
		if w.update {
			slices.SortFunc(w.dirty[p], w.byKey)
			for _, e := range w.dirty[p] {
				w.output(e, emit)
			}
		}
		if wm >= w.minEnd[p] {
			minEnd := int64(math.MaxInt64)
			for k, e := range m {
				if end := e.start + w.size; end <= wm {
					evicted[p] = append(evicted[p], e)
					delete(m, k)
				} else {
					minEnd = min(minEnd, end)
				}
			}
			w.minEnd[p] = minEnd
			if len(evicted[p]) > len(m) {
				fresh := make(map[string]*win, len(m))
				for k, e := range m {
					fresh[k] = e
				}
				w.parts[p] = fresh
			}
		}
		slices.SortFunc(evicted[p], w.byKey)
		if !w.update {
			for _, e := range evicted[p] {
				w.output(e, emit)
			}
		}
		out[p] = w.changes(p, evicted[p])
	}
	return out
}

// changes lists the puts of dirty entries still held and the deletes of
// evicted ones, keys ascending.
func (w *window) changes(p int, evicted []*win) []state.Change {
	cs := make([]state.Change, 0, len(w.dirty[p])+len(evicted))
	for _, e := range w.dirty[p] {
		e.dirty = false
		if w.held(e) {
			cs = append(cs, state.Change{Key: []byte(w.stateKey(e)), Value: w.encode(e)})
			w.stats.NumRowsUpdated++
		}
	}
	for _, e := range evicted {
		cs = append(cs, state.Change{Key: []byte(w.stateKey(e)), Delete: true})
		w.stats.NumRowsRemoved++
	}
	w.dirty[p] = w.dirty[p][:0]
	slices.SortFunc(cs, func(a, b state.Change) int { return strings.Compare(string(a.Key), string(b.Key)) })
	return cs
}

func (w *window) encode(e *win) []byte {
	var b []byte
	for i, a := range w.aggs {
		b = a.appendAcc(b, &e.accs[i])
	}
	return b
}

// Reserve sizes the maps for n more entries of partition p.
func (w *window) Reserve(p, n int) {
	if n <= 8 {
		return
	}
	if w.fast != nil {
		w.fast.Reserve(n)
		return
	}
	if len(w.parts[p]) == 0 {
		w.parts[p] = make(map[string]*win, n)
	}
}

func (w *window) Restore(p int, c state.Change) error {
	if p < 0 || p >= len(w.parts) {
		return fmt.Errorf("window state: partition %d of %d", p, len(w.parts))
	}
	var first row.Value
	rest := c.Key
	for i := range w.keys {
		v, r, err := row.DecodeKey(rest)
		if err != nil {
			return fmt.Errorf("window state key %x: not a group key and window start", c.Key)
		}
		if i == 0 {
			first = v
		}
		rest = r
	}
	if len(rest) != 8 {
		return fmt.Errorf("window state key %x: not a group key and window start", c.Key)
	}
	start := int64(binary.BigEndian.Uint64(rest) ^ (1 << 63))
	fast := w.fast != nil && first.K == row.Int
	if c.Delete {
		if fast {
			w.fast.Delete(intWin{first.I, start})
		} else {
			delete(w.parts[p], string(c.Key))
		}
		return nil
	}
	var e *win
	if fast {
		e = w.newWin("", start)
		e.fast, e.ik = true, intWin{first.I, start}
	} else {
		e = w.newWin(string(c.Key), start)
	}
	e.p = p
	b := c.Value
	for i, a := range w.aggs {
		var err error
		if b, err = a.decodeAcc(b, &e.accs[i]); err != nil {
			return fmt.Errorf("window state key %x: aggregate %d: %w", c.Key, i, err)
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("window state key %x: %d bytes after the aggregates", c.Key, len(b))
	}
	if fast {
		w.fast.Put(e.ik, e) // a later delta's entry replaces the older one
		w.fastMinEnd = min(w.fastMinEnd, start+w.size)
	} else {
		w.parts[p][e.key] = e
		w.minEnd[p] = min(w.minEnd[p], start+w.size)
	}
	return nil
}

func (w *window) Snapshot(p int, add func(state.Change)) {
	es := make([]*win, 0, len(w.parts[p]))
	for _, e := range w.parts[p] {
		es = append(es, e)
	}
	if w.fast != nil {
		w.fast.All(func(_ intWin, e *win) {
			if e.p == p {
				es = append(es, e)
			}
		})
	}
	keys := make([]string, len(es))
	for i, e := range es {
		keys[i] = w.snapKey(e)
	}
	idx := make([]int, len(es))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	for _, i := range idx {
		add(state.Change{Key: []byte(keys[i]), Value: w.encode(es[i])})
	}
}

// snapKey is stateKey without caching (Snapshot may run for several
// partitions at once).
func (w *window) snapKey(e *win) string {
	if e.key != "" || !e.fast {
		return e.key
	}
	return string(appendStart(row.IntV(e.ik.key).AppendKey(nil), e.start))
}

func (w *window) Stats() Stats {
	s := w.stats
	if w.fast != nil {
		s.NumRowsTotal = int64(w.fast.Len())
	}
	for _, m := range w.parts {
		s.NumRowsTotal += int64(len(m))
	}
	return s
}

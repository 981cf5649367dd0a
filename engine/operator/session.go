package operator

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/engine/state"
)

// session is session_window aggregation. A state entry is one group key;
// its value is the group's open sessions, oldest first: a uvarint count,
// then per session the start and end (varints, epoch ms) and the
// accumulators.
type session struct {
	keyed
	gap     int64
	aggs    []aggFunc
	update  bool
	names   []string
	groups  []map[string]*group
	dirty   [][]*group
	minEnd  []int64
	stats   Stats
	scratch []sess
}

type group struct {
	key   string
	list  []sess // sorted by start, non-overlapping
	dirty bool
}

type sess struct {
	start, end int64
	accs       []acc
	changed    bool // in this batch, for update mode
}

func newSession(k keyed, gap int64, aggs []spec.Aggregate, mode string) *session {
	s := &session{keyed: k, gap: gap, aggs: compileAggs(aggs), update: mode == spec.Update}
	s.names = outputNames(k.keys, aggs)
	s.groups = partMaps[*group](k.parts)
	s.dirty = make([][]*group, k.parts)
	s.minEnd = noneYet(k.parts)
	return s
}

func (s *session) Name() string   { return "sessionWindowAggregate" }
func (s *session) Stateful() bool { return true }

func (s *session) Add(ts int64, r *row.Row) {
	gk, p := s.groupKey(r)
	g := s.groups[p][string(gk)]
	if g == nil {
		g = &group{key: string(gk)}
		s.groups[p][g.key] = g
	}
	n := sess{start: ts, end: ts + s.gap, accs: make([]acc, len(s.aggs)), changed: true}
	for i, a := range s.aggs {
		a.add(&n.accs[i], r)
	}
	// merge every session that overlaps [ts, ts+gap)
	kept := s.scratch[:0]
	for _, o := range g.list {
		if o.start < n.end && n.start < o.end {
			n.start, n.end = min(n.start, o.start), max(n.end, o.end)
			for i, a := range s.aggs {
				a.merge(&n.accs[i], &o.accs[i])
			}
			continue
		}
		kept = append(kept, o)
	}
	i, _ := slices.BinarySearchFunc(kept, n.start, func(x sess, t int64) int { return cmp.Compare(x.start, t) })
	kept = slices.Insert(kept, i, n)
	g.list = append(g.list[:0], kept...)
	s.scratch = kept[:0]
	s.minEnd[p] = min(s.minEnd[p], n.end)
	if !g.dirty {
		g.dirty = true
		s.dirty[p] = append(s.dirty[p], g)
	}
}

func (s *session) output(key string, x *sess, emit func(*row.Row)) {
	vals, _, err := row.DecodeKeys([]byte(key), len(s.keys))
	if err != nil {
		panic(fmt.Sprintf("session state key %x: %v", key, err))
	}
	vals = append(vals, row.StrV(FormatTime(x.start)), row.StrV(FormatTime(x.end)))
	for i, a := range s.aggs {
		vals = append(vals, a.result(&x.accs[i]))
	}
	emit(&row.Row{Names: s.names, Vals: vals})
}

func (s *session) Finish(wm int64, emit func(*row.Row)) [][]state.Change {
	out := make([][]state.Change, len(s.groups))
	s.stats.NumRowsUpdated, s.stats.NumRowsRemoved = 0, 0
	for p, m := range s.groups {
		byKey := func(a, b *group) int { return strings.Compare(a.key, b.key) }
		slices.SortFunc(s.dirty[p], byKey)
		if s.update {
			for _, g := range s.dirty[p] {
				for i := range g.list {
					if g.list[i].changed {
						s.output(g.key, &g.list[i], emit)
						g.list[i].changed = false
					}
				}
			}
		} else {
			for _, g := range s.dirty[p] {
				for i := range g.list {
					g.list[i].changed = false
				}
			}
		}
		touched := s.dirty[p]
		if wm >= s.minEnd[p] {
			var evictedGroups []*group
			minEnd := int64(math.MaxInt64)
			for _, g := range m {
				n := 0
				for _, x := range g.list {
					if x.end <= wm {
						n++
					} else {
						minEnd = min(minEnd, x.end)
					}
				}
				if n > 0 {
					evictedGroups = append(evictedGroups, g)
				}
			}
			s.minEnd[p] = minEnd
			slices.SortFunc(evictedGroups, byKey)
			for _, g := range evictedGroups {
				kept := g.list[:0]
				for i := range g.list {
					x := g.list[i]
					if x.end <= wm {
						if !s.update {
							s.output(g.key, &x, emit)
						}
						s.stats.NumRowsRemoved++
						continue
					}
					kept = append(kept, x)
				}
				g.list = kept
				if !g.dirty {
					g.dirty = true
					touched = append(touched, g)
				}
			}
		}
		cs := make([]state.Change, 0, len(touched))
		for _, g := range touched {
			g.dirty = false
			if len(g.list) == 0 {
				delete(m, g.key)
				cs = append(cs, state.Change{Key: []byte(g.key), Delete: true})
				continue
			}
			cs = append(cs, state.Change{Key: []byte(g.key), Value: s.encode(g)})
			s.stats.NumRowsUpdated++
		}
		slices.SortFunc(cs, func(a, b state.Change) int { return strings.Compare(string(a.Key), string(b.Key)) })
		out[p] = cs
		s.dirty[p] = s.dirty[p][:0]
	}
	return out
}

func (s *session) encode(g *group) []byte {
	b := binary.AppendUvarint(nil, uint64(len(g.list)))
	for i := range g.list {
		x := &g.list[i]
		b = binary.AppendVarint(b, x.start)
		b = binary.AppendVarint(b, x.end)
		for j, a := range s.aggs {
			b = a.appendAcc(b, &x.accs[j])
		}
	}
	return b
}

func (s *session) Restore(p int, c state.Change) error {
	if p < 0 || p >= len(s.groups) {
		return fmt.Errorf("session state: partition %d of %d", p, len(s.groups))
	}
	key := string(c.Key)
	if c.Delete {
		delete(s.groups[p], key)
		return nil
	}
	if _, rest, err := row.DecodeKeys(c.Key, len(s.keys)); err != nil || len(rest) != 0 {
		return fmt.Errorf("session state key %x: not a group key", c.Key)
	}
	b := c.Value
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)) {
		return fmt.Errorf("session state key %x: bad session count", c.Key)
	}
	b = b[w:]
	g := &group{key: key, list: make([]sess, 0, n)}
	for i := range int(n) {
		var x sess
		var w1, w2 int
		x.start, w1 = binary.Varint(b)
		if w1 <= 0 {
			return fmt.Errorf("session state key %x: session %d start", c.Key, i)
		}
		x.end, w2 = binary.Varint(b[w1:])
		if w2 <= 0 || x.end < x.start {
			return fmt.Errorf("session state key %x: session %d end", c.Key, i)
		}
		b = b[w1+w2:]
		x.accs = make([]acc, len(s.aggs))
		var err error
		for j, a := range s.aggs {
			if b, err = a.decodeAcc(b, &x.accs[j]); err != nil {
				return fmt.Errorf("session state key %x: session %d aggregate %d: %w", c.Key, i, j, err)
			}
		}
		if i > 0 && x.start < g.list[i-1].end {
			return fmt.Errorf("session state key %x: sessions %d and %d overlap", c.Key, i-1, i)
		}
		g.list = append(g.list, x)
		s.minEnd[p] = min(s.minEnd[p], x.end)
	}
	if len(b) != 0 {
		return fmt.Errorf("session state key %x: %d bytes after the sessions", c.Key, len(b))
	}
	s.groups[p][key] = g
	return nil
}

func (s *session) Snapshot(p int, add func(state.Change)) {
	for _, k := range slices.Sorted(maps.Keys(s.groups[p])) {
		add(state.Change{Key: []byte(k), Value: s.encode(s.groups[p][k])})
	}
}

func (s *session) Stats() Stats {
	st := s.stats
	st.NumRowsTotal = 0
	for _, m := range s.groups {
		for _, g := range m {
			st.NumRowsTotal += int64(len(g.list))
		}
	}
	return st
}

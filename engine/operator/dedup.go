package operator

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/state"
)

// dedup drops rows whose key was seen before. A state entry is one key; its
// value is the time (epoch ms, 8 bytes big-endian) until which duplicates
// of it are dropped: the first row's event time plus the watermark delay.
// The entry is removed once the watermark reaches that time.
type dedup struct {
	keyed
	delay   int64
	seen    []map[string]int64
	dirty   [][]string
	out     []row.Row
	minExp  []int64
	stats   Stats
	dropped int64
}

func newDedup(k keyed, delay int64) *dedup {
	d := &dedup{keyed: k, delay: delay}
	d.seen = partMaps[int64](k.parts)
	d.dirty = make([][]string, k.parts)
	d.minExp = noneYet(k.parts)
	return d
}

func (d *dedup) Name() string   { return "dedupeWithinWatermark" }
func (d *dedup) Stateful() bool { return true }

func (d *dedup) Add(ts int64, r *row.Row) {
	k, p := d.groupKey(r)
	if _, dup := d.seen[p][string(k)]; dup {
		d.dropped++
		return
	}
	exp := ts + d.delay
	key := string(k)
	d.seen[p][key] = exp
	d.minExp[p] = min(d.minExp[p], exp)
	d.dirty[p] = append(d.dirty[p], key)
	d.out = append(d.out, r.Clone())
}

func encodeExp(exp int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(exp))
}

func (d *dedup) Finish(wm int64, emit func(*row.Row)) [][]state.Change {
	for i := range d.out {
		emit(&d.out[i])
	}
	d.out = d.out[:0]
	d.stats.NumRowsUpdated, d.stats.NumRowsRemoved = 0, 0
	d.stats.NumRowsDroppedDups, d.dropped = d.dropped, 0
	out := make([][]state.Change, len(d.seen))
	for p, m := range d.seen {
		var cs []state.Change
		for _, k := range d.dirty[p] {
			if exp, ok := m[k]; ok && exp > wm {
				cs = append(cs, state.Change{Key: []byte(k), Value: encodeExp(exp)})
				d.stats.NumRowsUpdated++
			}
		}
		if wm >= d.minExp[p] {
			minExp := int64(math.MaxInt64)
			for k, exp := range m {
				if exp <= wm {
					delete(m, k)
					d.stats.NumRowsRemoved++
					cs = append(cs, state.Change{Key: []byte(k), Delete: true})
					continue
				}
				minExp = min(minExp, exp)
			}
			d.minExp[p] = minExp
		}
		d.dirty[p] = d.dirty[p][:0]
		slices.SortFunc(cs, func(a, b state.Change) int { return strings.Compare(string(a.Key), string(b.Key)) })
		out[p] = cs
	}
	return out
}

func (d *dedup) Restore(p int, c state.Change) error {
	if p < 0 || p >= len(d.seen) {
		return fmt.Errorf("dedup state: partition %d of %d", p, len(d.seen))
	}
	if c.Delete {
		delete(d.seen[p], string(c.Key))
		return nil
	}
	if len(c.Value) != 8 {
		return fmt.Errorf("dedup state key %x: value of %d bytes, want 8", c.Key, len(c.Value))
	}
	exp := int64(binary.BigEndian.Uint64(c.Value))
	d.seen[p][string(c.Key)] = exp
	d.minExp[p] = min(d.minExp[p], exp)
	return nil
}

func (d *dedup) Snapshot(p int, add func(state.Change)) {
	for _, k := range slices.Sorted(maps.Keys(d.seen[p])) {
		add(state.Change{Key: []byte(k), Value: encodeExp(d.seen[p][k])})
	}
}

func (d *dedup) Stats() Stats {
	s := d.stats
	for _, m := range d.seen {
		s.NumRowsTotal += int64(len(m))
	}
	return s
}

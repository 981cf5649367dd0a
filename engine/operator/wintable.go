package operator

import "math/bits"

// winTable is the window operator's index of single-integer-key windows:
// an open-addressing hash table (linear probing, backward-shift deletion)
// from (key, window start) to the window. It hashes the two integers with
// one multiplication instead of hashing 16 bytes, and keeps the key next
// to the pointer, so a lookup is usually one cache line; this is the
// per-row lookup of the throughput path.
type winTable struct {
	slots []winSlot // len is a power of two, or 0
	shift uint      // 64 - log2(len(slots))
	n     int
}

type winSlot struct {
	k intWin
	e *win // nil: empty
}

func newWinTable(hint int) *winTable {
	t := &winTable{}
	t.init(hint)
	return t
}

// init empties t, sized for hint entries without growing.
func (t *winTable) init(hint int) {
	size := 16
	for size*3 < hint*4+4 { // load factor ≤ 3/4
		size *= 2
	}
	t.slots = make([]winSlot, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	t.n = 0
}

func (t *winTable) index(k intWin) uint64 {
	h := (uint64(k.key) ^ bits.RotateLeft64(uint64(k.start), 32)) * 0x9E3779B97F4A7C15
	return h >> t.shift
}

// Len is the number of entries.
func (t *winTable) Len() int { return t.n }

// Get returns the window of k, or nil.
func (t *winTable) Get(k intWin) *win {
	mask := uint64(len(t.slots) - 1)
	for i := t.index(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.e == nil {
			return nil
		}
		if s.k == k {
			return s.e
		}
	}
}

// Put sets the window of k.
func (t *winTable) Put(k intWin, e *win) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.index(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.e == nil {
			s.k, s.e = k, e
			t.n++
			return
		}
		if s.k == k {
			s.e = e
			return
		}
	}
}

// Delete removes k.
func (t *winTable) Delete(k intWin) {
	mask := uint64(len(t.slots) - 1)
	i := t.index(k)
	for {
		s := &t.slots[i]
		if s.e == nil {
			return
		}
		if s.k == k {
			break
		}
		i = (i + 1) & mask
	}
	// shift the following entries of the run back over the hole
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := t.slots[j]
		if s.e == nil {
			break
		}
		home := t.index(s.k)
		// s may move to i when its home is not cyclically in (i, j]
		if (j-home)&mask >= (j-i)&mask {
			t.slots[i] = s
			i = j
		}
	}
	t.slots[i] = winSlot{}
	t.n--
}

// All calls fn for every entry (fn must not change t).
func (t *winTable) All(fn func(k intWin, e *win)) {
	for i := range t.slots {
		if s := &t.slots[i]; s.e != nil {
			fn(s.k, s.e)
		}
	}
}

// Reserve makes room for n more entries without growing.
func (t *winTable) Reserve(n int) {
	if (t.n+n)*4 <= len(t.slots)*3 {
		return
	}
	old := t.slots
	t.init(t.n + n)
	for _, s := range old {
		if s.e != nil {
			t.Put(s.k, s.e)
		}
	}
}

func (t *winTable) grow() {
	old := t.slots
	t.init(len(old)) // twice the room: len(old) entries at ≤ 3/4
	for _, s := range old {
		if s.e != nil {
			t.Put(s.k, s.e)
		}
	}
}

package operator

import (
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/row"
)

// maxDurMs is the longest window size, slide or gap a spec accepts.
const maxDurMs = math.MaxInt64 / int64(time.Millisecond)

func TestCheckEventTime(t *testing.T) {
	for _, ms := range []int64{MinEventTime, 1, 1767225600000, MaxEventTime} {
		if err := CheckEventTime(ms); err != nil {
			t.Errorf("%d: %v", ms, err)
		}
	}
	for _, ms := range []int64{-1, math.MinInt64, MaxEventTime + 1, math.MaxInt64} {
		if err := CheckEventTime(ms); !errors.Is(err, ErrEventTimeRange) {
			t.Errorf("%d: %v, want ErrEventTimeRange", ms, err)
		}
	}
	for _, f := range []float64{1e300, -1e300, math.Inf(1), math.Inf(-1)} {
		ms, ok := EventTime(row.FloatV(f))
		if ok && CheckEventTime(ms) == nil {
			t.Errorf("float %v accepted as %d", f, ms)
		}
	}
}

// checkBounds runs ts through a windowed operator of the given size and
// slide (ms; slide 0: tumbling) or session gap: no window closes at a
// watermark at or below ts, and every window or session the operator holds
// contains ts (its end computed without overflow).
func checkBounds(t *testing.T, ts, size, slide, gap int64) {
	t.Helper()
	var op string
	switch {
	case gap > 0:
		op = "{kind: session_window, keys: [key], gap: " + strconv.FormatInt(gap, 10) + "}"
	case slide > 0:
		op = "{kind: sliding_window, keys: [key], size: " + strconv.FormatInt(size, 10) + ", slide: " + strconv.FormatInt(slide, 10) + "}"
	default:
		op = "{kind: tumbling_window, keys: [key], size: " + strconv.FormatInt(size, 10) + "}"
	}
	o, err := New(fuzzSpec(t, op), Config{Partitions: 2})
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	r := row.Row{Names: []string{"key"}, Vals: []row.Value{row.IntV(1)}}
	o.Add(ts, &r)
	// Nothing closes at a watermark at or below the event time.
	early := 0
	o.Finish(ts, func(*row.Row) { early++ })
	if early > 0 {
		t.Fatalf("%s, ts %d: %d windows closed at watermark %d, before their event", op, ts, early, ts)
	}
	switch w := o.(type) {
	case *window:
		n := 0
		for _, m := range w.parts {
			for _, e := range m {
				n++
				if !(e.start <= ts && ts < e.start+w.size) {
					t.Fatalf("%s: window [%d, %d) does not hold %d", op, e.start, e.start+w.size, ts)
				}
			}
		}
		if w.fast != nil {
			w.fast.All(func(_ intWin, e *win) {
				n++
				if !(e.start <= ts && ts < e.start+w.size) {
					t.Fatalf("%s: window [%d, %d) does not hold %d", op, e.start, e.start+w.size, ts)
				}
			})
		}
		want := int64(1) // tumbling
		if slide > 0 {
			want = (size + slide - 1) / slide
		}
		if n == 0 || int64(n) > want {
			t.Fatalf("%s: %d windows for ts %d, want 1 to %d", op, n, ts, want)
		}
	case *session:
		for _, gs := range w.groups {
			for _, g := range gs {
				for _, x := range g.list {
					if !(x.start <= ts && ts < x.end) {
						t.Fatalf("%s: session [%d, %d) does not hold %d", op, x.start, x.end, ts)
					}
				}
			}
		}
	}
}

// TestWindowBoundsAtTheLimits: at the smallest and largest accepted event
// times, with the smallest and largest sizes, slides and gaps a spec
// accepts, every window holds its event and none closes before it.
func TestWindowBoundsAtTheLimits(t *testing.T) {
	for _, ts := range []int64{MinEventTime, MinEventTime + 1, 1767225600000, MaxEventTime - 1, MaxEventTime} {
		for _, size := range []int64{1, 60_000, maxDurMs} {
			checkBounds(t, ts, size, 0, 0)
			checkBounds(t, ts, size, max(size/1000+1, 1), 0)
			checkBounds(t, ts, 0, 0, size)
		}
	}
}

func FuzzWindowBounds(f *testing.F) {
	f.Add(MaxEventTime, int64(60_000), int64(0), int64(0))
	f.Add(MaxEventTime, maxDurMs, maxDurMs/1000+1, int64(0))
	f.Add(int64(0), int64(1), int64(0), maxDurMs)
	f.Fuzz(func(t *testing.T, ts, size, slide, gap int64) {
		if CheckEventTime(ts) != nil {
			return
		}
		switch {
		case gap > 0:
			checkBounds(t, ts, 0, 0, 1+gap%maxDurMs)
		case size > 0:
			size = 1 + size%maxDurMs
			if slide > 0 {
				slide = 1 + slide%size
				if (size+slide-1)/slide > 1000 {
					return // refused by the spec
				}
			} else {
				slide = 0
			}
			checkBounds(t, ts, size, slide, 0)
		}
	})
}

package main

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckgate/ckgate/internal/faultproxy"
)

// wireSoakGoal is the fewest faults a wire-fault cell must inject per cloud
// under `make soak` (CKGATE_SOAK_REPORT set).
const wireSoakGoal = 500

// wireRuns is CKGATE_SOAK_WIRE_RUNS, default 1 (make test).
func wireRuns(t *testing.T) int {
	t.Helper()
	v := os.Getenv("CKGATE_SOAK_WIRE_RUNS")
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("CKGATE_SOAK_WIRE_RUNS=%q: want a positive number", v)
	}
	return n
}

// wireFigures counts what a wire-fault cell injected and how its runs
// settled it.
type wireFigures struct {
	mu       sync.Mutex
	seen     int // events accounted for
	injected map[faultproxy.Kind]int
	// resolved: faults on conditional requests that reached the server (so
	// the write may have been applied while the client saw a failure, or
	// saw "exists" for its own write), in runs that then completed with
	// the exact outcome. Faults of killed runs are not counted.
	resolved int
	unknown  int // runs that ended on ErrUnknownOutcome
	unavail  int // runs that ended on ErrUnavailable
}

// ended returns the killCell.ended hook that accounts for the faults p
// injected while a child ran.
func (f *wireFigures) ended(p *faultproxy.Proxy) func(c *child, killed bool) {
	return func(c *child, killed bool) {
		ev := p.Events()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.injected == nil {
			f.injected = map[faultproxy.Kind]int{}
		}
		mine := ev[min(f.seen, len(ev)):]
		f.seen = len(ev)
		ambiguous := 0
		for _, e := range mine {
			f.injected[e.Kind]++
			if e.Rule == "conditional" && e.Sent > 0 {
				ambiguous++
			}
		}
		switch {
		case killed:
		case c.code() == 0:
			f.resolved += ambiguous
		case strings.Contains(c.output(), ": outcome unknown"):
			f.unknown++
		default:
			f.unavail++
		}
	}
}

// report logs the cell's figures, adds its row to the soak report, and
// fails a cell that injected nothing (or, at make soak's length, fewer than
// the goal).
func (f *wireFigures) report(t *testing.T, cloud string, p *faultproxy.Proxy, kf killFigures, took time.Duration) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	total := 0
	fields := []any{"test", "WireFaults", "cell", "wire/" + cloud, "runs", kf.runs, "kills", kf.kills, "processes", kf.processes,
		"requests", p.Requests()}
	var kinds []any
	for _, k := range faultproxy.Kinds {
		total += f.injected[k]
		kinds = append(kinds, k.Name(), f.injected[k])
	}
	fields = append(fields, "faults", total)
	fields = append(fields, kinds...)
	fields = append(fields, "ambiguous_resolved", f.resolved, "unknown_outcome", f.unknown, "unavailable_exits", f.unavail,
		"lost", kf.lost, "duplicated", kf.duplicated, "resent", kf.resent, "seconds", int(took.Seconds()))
	t.Logf("soak: cell=wire/%s runs=%d kills=%d requests=%d faults=%d %v ambiguous_resolved=%d unknown_outcome=%d unavailable_exits=%d lost=%d duplicated=%d (%s)",
		cloud, kf.runs, kf.kills, p.Requests(), total, f.injected, f.resolved, f.unknown, f.unavail, kf.lost, kf.duplicated, took.Round(time.Second))
	soakReport(t, fields...)
	if total == 0 {
		t.Fatal("no fault was injected: the cell proves nothing")
	}
	if os.Getenv("CKGATE_SOAK_REPORT") != "" && total < wireSoakGoal {
		t.Fatalf("%d faults injected in %d runs, the soak's goal is >= %d: raise SOAK_WIRE_RUNS", total, kf.runs, wireSoakGoal)
	}
}

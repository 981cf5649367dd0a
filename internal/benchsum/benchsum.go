// Package benchsum records the headline figures of benchmarks (requests per
// batch, latency ratios) as JSON lines, so `make bench` can end with a plain
// table that anyone can read without parsing benchmark output, and checks
// each figure against its goal.
//
// A benchmark calls Record; when the environment variable named by EnvVar is
// set, one line {"name","value","unit","goal"} is appended to that file.
// cmd/benchsum reads the file back (Read), keeps the last value recorded
// under each name, and checks the goals (Check).
//
// # Goals
//
// A goal is a comparison with a number: "<=3", ">=0.9", "==0", "<1.5",
// ">10". The empty goal and "-" mean "no goal" and always pass.
package benchsum

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// EnvVar names the file Record appends to. Record does nothing when it is
// unset or empty.
const EnvVar = "CKGATE_BENCH_SUMMARY"

// Figure is one recorded benchmark figure.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	Goal  string  `json:"goal"`
}

// metricReporter is what *testing.B adds to testing.TB.
type metricReporter interface {
	ReportMetric(n float64, unit string)
}

// Record appends {name, value, unit, goal} to the summary file named by
// $CKGATE_BENCH_SUMMARY (a no-op when unset) and, for a *testing.B, also
// reports the value as a benchmark metric named name. Benchmarks may call it on every
// b.N round: the summary keeps the last value per name. A malformed goal or
// a failed write fails b.
func Record(b testing.TB, name string, value float64, unit, goal string) {
	b.Helper()
	if _, err := ParseGoal(goal); err != nil {
		b.Fatalf("benchsum: figure %q: %v", name, err)
	}
	if name == "" || strings.ContainsAny(name, " \t\n") {
		b.Fatalf("benchsum: figure name %q must be one word", name)
	}
	if m, ok := b.(metricReporter); ok {
		// Keyed by the figure's name: two figures in one unit must not
		// overwrite each other on the benchmark line.
		m.ReportMetric(value, name)
	}
	path := os.Getenv(EnvVar)
	if path == "" {
		return
	}
	if err := appendFigure(path, Figure{Name: name, Value: value, Unit: unit, Goal: goal}); err != nil {
		b.Fatalf("benchsum: %v", err)
	}
}

func appendFigure(path string, f Figure) error {
	line, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("figure %q: %w", f.Name, err)
	}
	line = append(line, '\n')
	// O_APPEND with one write per line keeps lines whole when several test
	// binaries (one per package) append at the same time.
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := file.Write(line); err != nil {
		file.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return file.Close()
}

// Read parses a summary written by Record. Figures keep the order in which
// their name first appeared; a name recorded again keeps its last value.
// Blank lines are skipped; a malformed line is an error naming its number.
func Read(r io.Reader) ([]Figure, error) {
	var out []Figure
	index := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var f Figure
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if f.Name == "" {
			return nil, fmt.Errorf("line %d: figure without a name", n)
		}
		if i, ok := index[f.Name]; ok {
			out[i] = f
			continue
		}
		index[f.Name] = len(out)
		out = append(out, f)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Goal is a parsed goal: Value Op Target must hold.
type Goal struct {
	Op     string // "<=", ">=", "==", "<", ">"; "" means no goal
	Target float64
}

// ErrBadGoal reports a goal that does not parse.
var ErrBadGoal = errors.New("bad goal")

// ParseGoal parses a goal such as "<=3", ">= 0.9" or "==0". The empty
// string and "-" are the zero Goal, which every value meets.
func ParseGoal(s string) (Goal, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "-" {
		return Goal{}, nil
	}
	for _, op := range []string{"<=", ">=", "==", "<", ">"} { // two-character operators first
		rest, ok := strings.CutPrefix(s, op)
		if !ok {
			continue
		}
		t, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
			return Goal{}, fmt.Errorf("%w %q: want <=, >=, ==, < or > followed by a finite number", ErrBadGoal, s)
		}
		return Goal{Op: op, Target: t}, nil
	}
	return Goal{}, fmt.Errorf("%w %q: want <=, >=, ==, < or > followed by a number", ErrBadGoal, s)
}

// Met reports whether v meets g. "==" allows a relative difference of 1e-9
// so that a computed 3.0000000000000004 equals 3. NaN never meets a goal.
func (g Goal) Met(v float64) bool {
	if g.Op == "" {
		return true
	}
	if math.IsNaN(v) {
		return false
	}
	eq := math.Abs(v-g.Target) <= 1e-9*math.Max(1, math.Abs(g.Target))
	switch g.Op {
	case "<=":
		return v <= g.Target || eq
	case ">=":
		return v >= g.Target || eq
	case "==":
		return eq
	case "<":
		return v < g.Target && !eq
	case ">":
		return v > g.Target && !eq
	}
	return false
}

func (g Goal) String() string {
	if g.Op == "" {
		return "-"
	}
	return g.Op + strconv.FormatFloat(g.Target, 'g', -1, 64)
}

// Failure is a figure that missed its goal (or whose goal does not parse).
type Failure struct {
	Figure Figure
	Reason string // "goal <=3" or the parse error
}

// Check returns the figures that do not meet their goals, in order.
func Check(figs []Figure) []Failure {
	var out []Failure
	for _, f := range figs {
		g, err := ParseGoal(f.Goal)
		switch {
		case err != nil:
			out = append(out, Failure{Figure: f, Reason: err.Error()})
		case !g.Met(f.Value):
			out = append(out, Failure{Figure: f, Reason: "goal " + g.String()})
		}
	}
	return out
}

// FormatValue renders a figure value for a table: integers exactly, other
// values with a few significant digits.
func FormatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case v == math.Trunc(v) && a < 1e15:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 0.01:
		s := strconv.FormatFloat(v, 'f', 3, 64)
		s = strings.TrimRight(s, "0")
		return strings.TrimSuffix(s, ".")
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

package benchsum

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseGoal(t *testing.T) {
	tests := []struct {
		in   string
		want Goal
		bad  bool
	}{
		{in: "", want: Goal{}},
		{in: "-", want: Goal{}},
		{in: "<=3", want: Goal{Op: "<=", Target: 3}},
		{in: ">=0.9", want: Goal{Op: ">=", Target: 0.9}},
		{in: "==0", want: Goal{Op: "==", Target: 0}},
		{in: "<1.5", want: Goal{Op: "<", Target: 1.5}},
		{in: "> 10", want: Goal{Op: ">", Target: 10}},
		{in: " <= -2 ", want: Goal{Op: "<=", Target: -2}},
		{in: "3", bad: true},
		{in: "<=", bad: true},
		{in: "<=abc", bad: true},
		{in: "=3", bad: true},
		{in: "!=3", bad: true},
		{in: "<=NaN", bad: true},
		{in: ">=Inf", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseGoal(tt.in)
			if tt.bad {
				if !errors.Is(err, ErrBadGoal) {
					t.Fatalf("ParseGoal(%q) = %v, %v; want ErrBadGoal", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseGoal(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestGoalMet(t *testing.T) {
	tests := []struct {
		goal  string
		value float64
		met   bool
	}{
		{"<=3", 3, true},
		{"<=3", 2, true},
		{"<=3", 3.01, false},
		{"<=3", 3.0000000000000004, true},
		{">=0.9", 0.9, true},
		{">=0.9", 0.89, false},
		{"==0", 0, true},
		{"==0", 1, false},
		{"==3", 3.0000000000000004, true},
		{"<1.5", 1.5, false},
		{"<1.5", 1.4, true},
		{">1", 1, false},
		{">1", 2, true},
		{"", 123, true},
		{"-", math.Inf(1), true},
		{"<=3", math.NaN(), false},
	}
	for _, tt := range tests {
		g, err := ParseGoal(tt.goal)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Met(tt.value); got != tt.met {
			t.Errorf("%q met by %v = %v, want %v", tt.goal, tt.value, got, tt.met)
		}
	}
}

func TestReadKeepsLastValuePerName(t *testing.T) {
	in := `{"name":"a","value":1,"unit":"req","goal":"<=3"}
{"name":"b","value":0.5,"unit":"ratio","goal":"<=1.5"}

{"name":"a","value":4,"unit":"req","goal":"<=3"}
`
	figs, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 2 || figs[0].Name != "a" || figs[0].Value != 4 || figs[1].Name != "b" {
		t.Fatalf("Read = %+v", figs)
	}
	fails := Check(figs)
	if len(fails) != 1 || fails[0].Figure.Name != "a" || fails[0].Reason != "goal <=3" {
		t.Fatalf("Check = %+v", fails)
	}
}

func TestReadRejectsMalformedLines(t *testing.T) {
	for _, in := range []string{"not json\n", `{"value":1}` + "\n"} {
		if _, err := Read(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("Read(%q) error = %v, want one naming line 1", in, err)
		}
	}
}

func TestCheckReportsBadGoal(t *testing.T) {
	fails := Check([]Figure{{Name: "x", Value: 1, Goal: "about 3"}, {Name: "y", Value: 1, Goal: "==1"}})
	if len(fails) != 1 || fails[0].Figure.Name != "x" || !strings.Contains(fails[0].Reason, "bad goal") {
		t.Fatalf("Check = %+v", fails)
	}
}

func TestRecordAppendsToSummaryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.jsonl")
	t.Setenv(EnvVar, path)
	Record(t, "commit_requests_per_batch", 3, "req", "<=3")
	Record(t, "commit_local_vs_fsync_floor", 1.25, "ratio", "<=1.5")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	figs, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	want := []Figure{
		{Name: "commit_requests_per_batch", Value: 3, Unit: "req", Goal: "<=3"},
		{Name: "commit_local_vs_fsync_floor", Value: 1.25, Unit: "ratio", Goal: "<=1.5"},
	}
	if len(figs) != len(want) || figs[0] != want[0] || figs[1] != want[1] {
		t.Fatalf("summary = %+v, want %+v", figs, want)
	}
}

func TestRecordIsANoOpWithoutEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, "")
	t.Chdir(dir)
	Record(t, "x", 1, "req", "")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("Record wrote %v without %s", entries, EnvVar)
	}
}

func TestFormatValue(t *testing.T) {
	tests := map[float64]string{
		3:          "3",
		0:          "0",
		1.25:       "1.25",
		1.3333333:  "1.333",
		12345.678:  "12345.7",
		0.000123:   "0.000123",
		-2:         "-2",
		1234567890: "1234567890",
	}
	for v, want := range tests {
		if got := FormatValue(v); got != want {
			t.Errorf("FormatValue(%v) = %q, want %q", v, got, want)
		}
	}
}

func FuzzParseGoal(f *testing.F) {
	for _, s := range []string{"<=3", ">=0.9", "==0", "<1e3", "> -4", "", "-", "=<3", "<=0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGoal(s)
		if err != nil {
			return
		}
		again, err := ParseGoal(g.String())
		if err != nil || again != g {
			t.Fatalf("ParseGoal(%q) = %+v; its String %q parses to %+v, %v", s, g, g.String(), again, err)
		}
	})
}

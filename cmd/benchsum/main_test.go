package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunPrintsTableAndChecksGoals(t *testing.T) {
	tests := []struct {
		name     string
		summary  string
		code     int
		contains []string
		absent   []string
	}{
		{
			name: "all met, last value wins",
			summary: `{"name":"commit_requests_per_batch","value":4,"unit":"req","goal":"<=3"}
{"name":"commit_local_vs_fsync_floor","value":1.3,"unit":"ratio","goal":"<=1.5"}
{"name":"commit_requests_per_batch","value":3,"unit":"req","goal":"<=3"}
`,
			code:     0,
			contains: []string{"NAME", "VALUE", "UNIT", "GOAL", "commit_requests_per_batch", "3 ", "req", "<=3", "1.3", "ratio"},
			absent:   []string{"FAILED", "4 "},
		},
		{
			name:     "missed goal",
			summary:  `{"name":"commit_local_vs_fsync_floor","value":1.7,"unit":"ratio","goal":"<=1.5"}` + "\n" + `{"name":"lost","value":0,"unit":"keys","goal":"==0"}` + "\n",
			code:     1,
			contains: []string{"FAILED goals: commit_local_vs_fsync_floor (1.7 ratio, goal <=1.5)"},
			absent:   []string{"lost ("},
		},
		{
			name:     "no goal",
			summary:  `{"name":"race_ms","value":12.5,"unit":"ms","goal":""}` + "\n",
			code:     0,
			contains: []string{"race_ms", "12.5", "ms", "-"},
		},
		{
			name:     "empty summary",
			summary:  "",
			code:     0,
			contains: []string{"no figures recorded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "summary.jsonl")
			if err := os.WriteFile(path, []byte(tt.summary), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			code := run([]string{path}, nil, &out, &errOut)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out.String(), errOut.String())
			}
			for _, s := range tt.contains {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, out.String())
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(out.String(), s) {
					t.Errorf("stdout has %q:\n%s", s, out.String())
				}
			}
		})
	}
}

func TestRunColumnsAreAligned(t *testing.T) {
	in := `{"name":"a","value":3,"unit":"req","goal":"<=3"}
{"name":"a_much_longer_name","value":1.25,"unit":"ratio","goal":"<=1.5"}
`
	var out bytes.Buffer
	if code := run([]string{"-"}, strings.NewReader(in), &out, &bytes.Buffer{}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("want header + 2 lines, got:\n%s", out.String())
	}
	col := strings.Index(lines[0], "VALUE")
	for _, l := range lines[1:] {
		if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("VALUE column not aligned at %d:\n%s", col, out.String())
		}
	}
}

func TestRunUnreadableInput(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{filepath.Join(t.TempDir(), "missing")}, nil, &out, &errOut); code != 2 {
		t.Fatalf("missing file: exit %d, want 2", code)
	}
	if code := run([]string{"-"}, strings.NewReader("garbage\n"), &out, &errOut); code != 2 {
		t.Fatalf("garbage: exit %d, want 2", code)
	}
	if code := run(nil, nil, &out, &errOut); code != 2 {
		t.Fatalf("no args: exit %d, want 2", code)
	}
}

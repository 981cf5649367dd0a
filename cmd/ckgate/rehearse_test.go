package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/demo"
	"github.com/ckgate/ckgate/rehearse"
)

// rehearseDemo writes the demo clickstream and a copy of the demo spec
// whose paths are absolute (no chdir), and returns the directory and spec.
func rehearseDemo(t *testing.T, files int) (dir, specPath string) {
	t.Helper()
	dir = t.TempDir()
	c := demo.Default()
	if files > 0 {
		c.Files = files
	}
	if _, err := demo.Write(filepath.Join(dir, "demo", "clickstream"), c); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../testdata/specs/clickstream-sessions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(src), "path: demo/", "path: "+filepath.ToSlash(dir)+"/demo/")
	specPath = filepath.Join(dir, "clickstream-sessions.yaml")
	if err := os.WriteFile(specPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, specPath
}

func TestRehearseHelpExplainsScenarios(t *testing.T) {
	r := ckgate(t, Options{}, "", "rehearse", "--help")
	r.want(t, 0, "EXIT STATUS", "--input", "--workdir", "--seed", "business key")
	for _, s := range rehearse.Scenarios() {
		if !strings.Contains(r.stdout, s.Name) || !strings.Contains(r.stdout, strings.Join(strings.Fields(s.Summary)[:5], " ")) {
			t.Errorf("help lacks scenario %s:\n%s", s.Name, r.stdout)
		}
	}
}

func TestRehearseJSONReport(t *testing.T) {
	dir, specPath := rehearseDemo(t, 0)
	work := filepath.Join(dir, "work")
	r := ckgate(t, Options{}, "", "rehearse", "--format", "json", "--seed", "3", "--workdir", work,
		"--checkpoint", filepath.Join(dir, "checkpoints", "none"), "--scenarios", "crash-before-commit,6", specPath)
	r.want(t, 0)
	var raw struct {
		Seed      uint64                       `json:"seed"`
		OK        bool                         `json:"ok"`
		Scenarios []map[string]json.RawMessage `json:"scenarios"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if raw.Seed != 3 || !raw.OK || len(raw.Scenarios) != 2 {
		t.Fatalf("seed %d ok %v, %d scenarios\n%s", raw.Seed, raw.OK, len(raw.Scenarios), r.stdout)
	}
	want := []string{"detail", "duplicated", "late_accepted", "late_dropped", "lost", "name", "ok", "rows_in", "rows_out", "state_rows_after", "state_rows_before"}
	for _, sc := range raw.Scenarios {
		var keys []string
		for k := range sc {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !slices.Equal(keys, want) {
			t.Fatalf("scenario keys %v, want %v", keys, want)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "second-writer", "checkpoint", "commits")); err != nil {
		t.Fatalf("--workdir was not used or not kept: %v", err)
	}
}

func TestRehearseTable(t *testing.T) {
	_, specPath := rehearseDemo(t, 0)
	r := ckgate(t, Options{}, "", "rehearse", "--seed", "5", "--scenarios", "1", specPath)
	r.want(t, 0, "SCENARIO", "crash-after-offsets", "pass", "verdict: PASS", "seed 5", "(removed)")
}

func TestRehearseExitStatus(t *testing.T) {
	dir, specPath := rehearseDemo(t, 0)
	t.Run("rate source without --input", func(t *testing.T) {
		p := filepath.Join(dir, "rate.yaml")
		os.WriteFile(p, []byte("name: r\nsource: {kind: rate, rows_per_second: 5}\nsink: {kind: files, path: out}\n"), 0o644)
		ckgate(t, Options{}, "", "rehearse", p).wantErr(t, 2, "--input")
	})
	t.Run("missing spec", func(t *testing.T) {
		ckgate(t, Options{}, "", "rehearse", filepath.Join(dir, "nope.yaml")).wantErr(t, 2)
	})
	t.Run("bad format", func(t *testing.T) {
		ckgate(t, Options{}, "", "rehearse", "--format", "xml", specPath).wantErr(t, 2, "--format")
	})
	t.Run("unknown scenario", func(t *testing.T) {
		ckgate(t, Options{}, "", "rehearse", "--scenarios", "crash-twice", specPath).wantErr(t, 2, "unknown scenario")
	})
	t.Run("flag after the spec", func(t *testing.T) {
		ckgate(t, Options{}, "", "rehearse", specPath, "--format", "xml").wantErr(t, 2, "--format")
	})
	t.Run("a scenario that cannot be exercised fails", func(t *testing.T) {
		// one input file is one data batch: no watermark to be late against
		_, one := rehearseDemo(t, 1)
		r := ckgate(t, Options{}, "", "rehearse", "--scenarios", "late-events", one)
		if r.code != 1 || !strings.Contains(r.stdout, "FAIL") || !strings.Contains(r.stdout, "not exercised") {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
	})
}

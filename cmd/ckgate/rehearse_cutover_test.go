package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	ct "github.com/ckgate/ckgate/rehearse/cutovertest"
)

// cutoverFixture writes a generated clickstream, the current spec and a
// production checkpoint and sink run from it, and returns the directory
// and the spec's path.
func cutoverFixture(t *testing.T) (dir, current string, base ct.Spec) {
	t.Helper()
	dir = t.TempDir()
	late := ct.Users("u", 20, ct.T0+61*ct.Min)
	late = append(late, ct.Users("late-mid-", 3, ct.T0+45*ct.Min)...)
	batches := [][]ct.Event{ct.Users("u", 20, ct.T0), ct.Users("u", 20, ct.T0+60*ct.Min), late, ct.Users("u", 20, ct.T0+300*ct.Min)}
	if err := ct.Write(filepath.Join(dir, "in"), batches); err != nil {
		t.Fatal(err)
	}
	base = ct.Spec{Name: "clicks", Input: filepath.Join(dir, "in"), Sink: filepath.Join(dir, "out"), Watermark: "10m", Gap: "5m"}
	current = filepath.Join(dir, "current.yaml")
	if err := base.WriteSpec(current); err != nil {
		t.Fatal(err)
	}
	if err := ct.RunProduction(context.Background(), current, filepath.Join(dir, "checkpoints", "clicks")); err != nil {
		t.Fatal(err)
	}
	return dir, current, base
}

// productionSnapshot hashes every file (path, content and mtime) of the
// production checkpoint, sink and input.
func productionSnapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	for _, sub := range []string{"checkpoints", "out", "in"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s %x %d", p, sha256.Sum256(data), fi.ModTime().UnixNano()))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestRehearseCandidateCLI(t *testing.T) {
	dir, current, base := cutoverFixture(t)
	cp := filepath.Join(dir, "checkpoints", "clicks")
	spec := func(name string, edit func(*ct.Spec)) string {
		s := base
		edit(&s)
		p := filepath.Join(dir, name+".yaml")
		if err := s.WriteSpec(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := productionSnapshot(t, dir)
	t.Run("identical candidate is same, byte-equal outputs, through a restart", func(t *testing.T) {
		r := ckgate(t, Options{}, "", "rehearse", current, "--candidate", current, "--checkpoint", cp, "--from-batch", "1", "--restart-at", "2", "--format", "json")
		r.want(t, 0)
		var rep struct {
			Verdict            string `json:"verdict"`
			NeedsNewCheckpoint bool   `json:"needs_new_checkpoint"`
			Current            struct {
				Restored     bool   `json:"restored"`
				Restarts     int    `json:"restarts"`
				RowsOut      int64  `json:"rows_out"`
				OutputSHA256 string `json:"output_sha256"`
			} `json:"current"`
			Candidate struct {
				Restored     bool   `json:"restored"`
				Restarts     int    `json:"restarts"`
				OutputSHA256 string `json:"output_sha256"`
			} `json:"candidate_run"`
			Production struct {
				Found bool `json:"found"`
			} `json:"production"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		if rep.Verdict != "same" || rep.NeedsNewCheckpoint || !rep.Production.Found || !rep.Current.Restored || !rep.Candidate.Restored {
			t.Fatalf("%s", r.stdout)
		}
		if rep.Current.RowsOut == 0 || rep.Current.OutputSHA256 != rep.Candidate.OutputSHA256 || rep.Current.Restarts != 1 || rep.Candidate.Restarts != 1 {
			t.Fatalf("outputs not byte-equal or no restart:\n%s", r.stdout)
		}
	})
	t.Run("JSON field names are stable", func(t *testing.T) {
		r := ckgate(t, Options{}, "", "rehearse", current, "--candidate", current, "--checkpoint", cp, "--json")
		r.want(t, 0)
		var top map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.stdout), &top); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range top {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := []string{"baseline", "boundary", "candidate", "candidate_run", "compat", "current", "input", "kept", "late_rows",
			"needs_new_checkpoint", "production", "reasons", "reconcile", "sink", "spec", "verdict", "workdir"}
		if !slices.Equal(keys, want) {
			t.Fatalf("keys %v, want %v", keys, want)
		}
	})
	t.Run("changed watermark differs, naming the late rows", func(t *testing.T) {
		wm := spec("wm20", func(s *ct.Spec) { s.Watermark = "20m" })
		r := ckgate(t, Options{}, "", "rehearse", "--candidate", wm, "--checkpoint", cp, "--from-batch", "1", current)
		r.want(t, 1, "verdict: differs", "undefined watermark", "late rows handled differently", "late-mid-01", "late-mid-03", "only in the candidate")
	})
	t.Run("changed key needs a new checkpoint", func(t *testing.T) {
		key := spec("bypage", func(s *ct.Spec) { s.Keys = []string{"page"} })
		r := ckgate(t, Options{}, "", "rehearse", current, "--candidate", key, "--checkpoint", cp, "--from-batch", "2")
		r.want(t, 1, "needs a new checkpoint", "fresh start", "boundary loses", "before batch 2", "not_allowed")
		r = ckgate(t, Options{}, "", "rehearse", current, "--candidate", key, "--checkpoint", cp, "--from-batch", "2", "--format", "json")
		r.want(t, 1, `"verdict": "differs"`, `"needs_new_checkpoint": true`)
	})
	t.Run("an event-time interval picks its batches", func(t *testing.T) {
		// batch 1 reads the events of T0+60m..T0+60m+19s only
		iv := fmt.Sprintf("%d..%d", ct.T0+60*ct.Min, ct.T0+60*ct.Min+20_000)
		r := ckgate(t, Options{}, "", "rehearse", current, "--candidate", current, "--checkpoint", cp, "--interval", iv, "--format", "json")
		r.want(t, 0, `"from_batch": 1`, `"to_batch": 1`, `"interval": "2026-01-01T01:00:00Z..2026-01-01T01:00:20Z"`, `"rows": []`)
	})
	t.Run("cannot rehearse", func(t *testing.T) {
		ckgate(t, Options{}, "", "rehearse", current, "--candidate", current, "--checkpoint", cp, "--from-batch", "99").wantErr(t, 2, "--from-batch 99", "0-")
		ckgate(t, Options{}, "", "rehearse", current, "--candidate", current, "--checkpoint", cp, "--interval", "soon..later").wantErr(t, 2, "--interval")
		ckgate(t, Options{}, "", "rehearse", current, "--candidate", current, "--from-batch", "1", "--interval", "0..1").wantErr(t, 2, "not both")
		ckgate(t, Options{}, "", "rehearse", current, "--candidate", current, "--checkpoint", cp, "--restart-at", "0", "--from-batch", "1").wantErr(t, 2, "--restart-at 0")
		ckgate(t, Options{}, "", "rehearse", current, "--candidate", filepath.Join(dir, "nope.yaml")).wantErr(t, 2, "--candidate")
		ckgate(t, Options{}, "", "rehearse", current, "--from-batch", "1").wantErr(t, 2, "needs --candidate")
		ckgate(t, Options{}, "", "rehearse", current, "--candidate", current, "--scenarios", "1").wantErr(t, 2, "--scenarios")
	})
	if after := productionSnapshot(t, dir); after != before {
		t.Fatalf("the production checkpoint, sink or input changed:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// TestRehearseCandidateAfterRetention: a checkpoint whose first batches
// retention removed is rehearsed from the first batch whose previous
// commit is still there; an earlier --from-batch cannot be rehearsed.
func TestRehearseCandidateAfterRetention(t *testing.T) {
	dir, current, _ := cutoverFixture(t)
	cp := filepath.Join(dir, "checkpoints", "clicks")
	ckgate(t, Options{}, "", "retention", "apply", cp, "--min-batches", "2").want(t, 0)
	if _, err := os.Stat(filepath.Join(cp, "commits", "0")); err == nil {
		t.Fatal("retention kept commits/0: the test does not test a purged log")
	}
	r := ckgate(t, Options{}, "", "rehearse", current, "--candidate", current, "--checkpoint", cp, "--json")
	r.want(t, 0, `"verdict": "same"`)
	var rep struct {
		Boundary struct {
			FromBatch int64 `json:"from_batch"`
		} `json:"boundary"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(cp, "commits"))
	first := int64(-1)
	for _, e := range entries {
		var n int64
		if _, err := fmt.Sscan(e.Name(), &n); err == nil && (first < 0 || n < first) {
			first = n
		}
	}
	if first <= 0 || rep.Boundary.FromBatch != first+1 {
		t.Fatalf("from batch %d, the first commit held is %d", rep.Boundary.FromBatch, first)
	}
	ckgate(t, Options{}, "", "rehearse", current, "--candidate", current, "--checkpoint", cp, "--from-batch", "0").wantErr(t, 2, "--from-batch 0", "the commit before it")
}

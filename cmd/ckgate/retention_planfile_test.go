package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ckgate/ckgate/lifecycle"
)

// readPlanFile decodes a plan file written by retention plan --out.
func readRetentionPlan(t *testing.T, path string) *lifecycle.PlanFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := lifecycle.ParsePlanFile(path, b)
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// files lists every file under dir, relative, slash-separated.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// retention plan --out then apply --plan deletes exactly the planned keys,
// even when the checkpoint has since gained more that a new plan would
// remove.
func TestRetentionApplyPlanFile(t *testing.T) {
	dir := t.TempDir()
	sp := filesQuery(t, dir, 0, 12)
	runCLI(t, dir, "run", "--checkpoint", "ck", "--available-now", sp).want(t, 0)
	runCLI(t, dir, "retention", "plan", "--min-batches", "2", "--sink", "out", "--out", "plan.json", "ck").want(t, 0, "remove")
	runCLI(t, dir, "retention", "plan", "--min-batches", "2", "--out", "plan.json", "ck").wantErr(t, 3, "plan.json exists")
	runCLI(t, dir, "retention", "plan", "--out", "-", "ck").wantErr(t, 2, "--out")
	pf := readRetentionPlan(t, filepath.Join(dir, "plan.json"))
	if len(pf.Checkpoint.Remove) == 0 || pf.Checkpoint.QueryID == "" || len(pf.Sinks) != 1 || len(pf.Sinks[0].Remove) == 0 {
		t.Fatalf("plan %+v", pf)
	}
	// More batches commit: a plan made now would remove more.
	filesQuery(t, dir, 12, 15)
	runCLI(t, dir, "run", "--checkpoint", "ck", "--available-now", sp).want(t, 0)
	before := files(t, filepath.Join(dir, "ck"))
	sinkBefore := files(t, filepath.Join(dir, "out"))
	runCLI(t, dir, "retention", "apply", "--plan", "plan.json", "--min-batches", "2").wantErr(t, 2, "--min-batches with --plan")
	runCLI(t, dir, "retention", "apply", "--plan", "plan.json", "in").wantErr(t, 2, "the plan is for")
	runCLI(t, dir, "retention", "apply", "--plan", "plan.json", "--sink", "in").wantErr(t, 2, "not among --sink")
	runCLI(t, dir, "retention", "apply", "--plan", "plan.json").want(t, 0, "deleted "+itoa(len(pf.Checkpoint.Remove))+" keys",
		"sink out: plan", "deleted "+itoa(len(pf.Sinks[0].Remove))+" manifests")
	wantGone(t, before, files(t, filepath.Join(dir, "ck")), pf.Checkpoint)
	wantGone(t, sinkBefore, files(t, filepath.Join(dir, "out")), pf.Sinks[0])
	runCLI(t, dir, "inspect", "ck").want(t, 0)
	// Applied again: every planned key is gone already.
	runCLI(t, dir, "retention", "apply", "--plan", "plan.json").want(t, 0, "already gone")
	runCLI(t, dir, "run", "--checkpoint", "ck", "--available-now", sp).want(t, 0)
}

// wantGone fails unless the keys in before and not in after are exactly
// the keys the plan target removes.
func wantGone(t *testing.T, before, after []string, tg lifecycle.PlanTarget) {
	t.Helper()
	var gone []string
	for _, k := range before {
		if !slices.Contains(after, k) {
			gone = append(gone, k)
		}
	}
	var planned []string
	for _, p := range tg.Remove {
		planned = append(planned, p.Key)
	}
	slices.Sort(gone)
	slices.Sort(planned)
	if !slices.Equal(gone, planned) {
		t.Fatalf("%s: deleted %v\nplanned %v", tg.URL, gone, planned)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A checkpoint that changed since the plan in a way that makes it unsafe
// is refused (exit 3) naming the change, and nothing is deleted.
func TestRetentionApplyPlanStale(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		change     func(t *testing.T, dir string, pf *lifecycle.PlanFile)
	}{
		{"rewritten", "bytes when planned", func(t *testing.T, dir string, pf *lifecycle.PlanFile) {
			k := pf.Checkpoint.Remove[len(pf.Checkpoint.Remove)-1].Key
			if err := os.WriteFile(filepath.Join(dir, "ck", filepath.FromSlash(k)), []byte("changed\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"query", "query id", func(t *testing.T, dir string, pf *lifecycle.PlanFile) {
			p := filepath.Join(dir, "ck", "metadata")
			if err := os.WriteFile(p, []byte(`{"id":"00000000-0000-0000-0000-000000000000"}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"rolled back", "latest commit batch was", func(t *testing.T, dir string, pf *lifecycle.PlanFile) {
			last := *pf.Checkpoint.LatestCommit
			for _, d := range []string{"commits", "offsets"} {
				if err := os.Remove(filepath.Join(dir, "ck", d, itoa(int(last)))); err != nil {
					t.Fatal(err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sp := filesQuery(t, dir, 0, 6)
			runCLI(t, dir, "run", "--checkpoint", "ck", "--available-now", sp).want(t, 0)
			runCLI(t, dir, "retention", "plan", "--min-batches", "3", "--out", "plan.json", "ck").want(t, 0)
			pf := readRetentionPlan(t, filepath.Join(dir, "plan.json"))
			tc.change(t, dir, pf)
			before := files(t, filepath.Join(dir, "ck"))
			runCLI(t, dir, "retention", "apply", "--plan", "plan.json").wantErr(t, 3, "changed since the plan", tc.want)
			if after := files(t, filepath.Join(dir, "ck")); !slices.Equal(before, after) {
				t.Fatalf("a refused plan deleted files:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(bad, []byte(`{"kind":"ckgate-retention-plan","version":1,"checkpoint":{"url":"ck","location":"x","remove":[{"key":"../etc","size":1,"reason":"r"}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLI(t, dir, "retention", "apply", "--plan", "plan.json").wantErr(t, 2, "plan.json", "not a retention plan")
	runCLI(t, dir, "retention", "apply", "--plan", "missing.json").wantErr(t, 2, "missing.json")
}

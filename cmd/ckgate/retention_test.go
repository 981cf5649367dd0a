package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/lifecycle"
)

func TestRetentionPlanAndApply(t *testing.T) {
	dir := copyTree(t, "checkpoint-version-4.0.0/hdfs/agg")
	// plan changes nothing and lists the removals with reasons.
	ckgate(t, Options{}, "", "retention", "plan", "--min-batches", "2", dir).want(t, 0,
		"retain from batch 2", "remove 9 keys", "offsets/0", "older than snapshot 2")
	r := ckgate(t, Options{}, "", "retention", "plan", "--min-batches", "2", "--format", "json", dir)
	r.want(t, 0)
	var plan lifecycle.RetentionResult
	if err := json.Unmarshal([]byte(r.stdout), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Remove) != 9 || plan.RetainFrom == nil || *plan.RetainFrom != 2 {
		t.Fatalf("plan: %d removals, retain from %v", len(plan.Remove), plan.RetainFrom)
	}
	for _, d := range plan.Remove {
		if _, err := os.Stat(filepath.Join(dir, d.Key)); err != nil {
			t.Fatalf("plan deleted %s: %v", d.Key, err)
		}
	}
	// The default keeps everything of a 4-batch checkpoint.
	ckgate(t, Options{}, "", "retention", "plan", dir).want(t, 0, "remove 0 keys")

	ckgate(t, Options{}, "", "retention", "apply", "--min-batches", "2", dir).want(t, 0, "deleted 9 keys")
	for _, d := range plan.Remove {
		if _, err := os.Stat(filepath.Join(dir, d.Key)); !os.IsNotExist(err) {
			t.Fatalf("%s survived apply: %v", d.Key, err)
		}
	}
	for _, d := range plan.Keep {
		if _, err := os.Stat(filepath.Join(dir, d.Key)); err != nil {
			t.Fatalf("apply removed kept %s: %v", d.Key, err)
		}
	}
	// The checkpoint still inspects clean, and a second apply has nothing to do.
	ckgate(t, Options{}, "", "inspect", dir).want(t, 0)
	ckgate(t, Options{}, "", "retention", "apply", "--min-batches", "2", dir).want(t, 0, "nothing to remove")
}

func TestRetentionUsage(t *testing.T) {
	dir := copyTree(t, "checkpoint-version-4.0.0/hdfs/agg")
	ckgate(t, Options{}, "", "retention", "plan", "--min-batches", "0", dir).wantErr(t, 2, "--min-batches")
	ckgate(t, Options{}, "", "retention", "plan").wantErr(t, 2)
	ckgate(t, Options{}, "", "retention", "plan", t.TempDir()).wantErr(t, 2, "not a checkpoint")
	ckgate(t, Options{}, "", "retention", "apply", "--concurrency", "0", dir).wantErr(t, 2, "--concurrency")
}

// filesQuery writes a spec reading dir/in (one file a batch) into dir/out
// and input files in/f-<from>.jsonl … in/f-<to-1>.jsonl (sinkQuery's query
// q over in); it returns the spec's path.
func filesQuery(t *testing.T, dir string, from, to int) string {
	t.Helper()
	return sinkQuery(t, dir, "q", "in", from, to)
}

// outputRows returns the "i" of every row under dir/out (sorted).
func outputRows(t *testing.T, dir string) []int {
	t.Helper()
	return outputRowsIn(t, dir, "out")
}

// outputRowsIn returns the "i" of every row under dir/out (sorted).
func outputRowsIn(t *testing.T, dir, out string) []int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, out))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), "_") && !strings.HasPrefix(e.Name(), ".") {
			files = append(files, filepath.Join(dir, out, e.Name()))
		}
	}
	return sortedRows(t, files)
}

func TestRetentionSink(t *testing.T) {
	dir := t.TempDir()
	sp := filesQuery(t, dir, 0, 12)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck", "--available-now", sp).want(t, 0)
	data := func() []string {
		var names []string
		entries, _ := os.ReadDir(filepath.Join(dir, "out"))
		for _, e := range entries {
			if !e.IsDir() {
				names = append(names, e.Name())
			}
		}
		return names
	}
	before := data()
	if len(before) != 12 {
		t.Fatalf("%d data files: %v", len(before), before)
	}
	runCLI(t, dir, "retention", "plan", "--min-batches", "2", "--sink", "out", "--sink", "out", "ck").wantErr(t, 2, "twice")
	runCLI(t, dir, "retention", "plan", "--min-batches", "2", "--sink", "in", "ck").wantErr(t, 2, "_spark_metadata")
	r := runCLI(t, dir, "retention", "plan", "--min-batches", "2", "--format", "json", "--sink", "out", "ck")
	r.want(t, 0)
	var plan struct {
		lifecycle.RetentionResult
		Sinks []struct {
			URL string `json:"url"`
			lifecycle.RetentionResult
		} `json:"sinks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.RetainFrom == nil || len(plan.Sinks) != 1 || plan.Sinks[0].URL != "out" {
		t.Fatalf("plan: %s", r.stdout)
	}
	sinkRemoved := plan.Sinks[0].Remove
	if len(sinkRemoved) != 9 {
		t.Fatalf("the sink plan removes %d manifests, want 0 … 8: %+v", len(sinkRemoved), sinkRemoved)
	}
	runCLI(t, dir, "retention", "plan", "--min-batches", "2", "--sink", "out", "ck").want(t, 0,
		"sink out (_spark_metadata/)", "remove 9 manifests", "folded into compaction 9")

	runCLI(t, dir, "retention", "apply", "--min-batches", "2", "--sink", "out", "ck").want(t, 0,
		"sink out: plan retention-", "deleted 9 manifests")
	for _, d := range sinkRemoved {
		if _, err := os.Stat(filepath.Join(dir, "out", filepath.FromSlash(d.Key))); !os.IsNotExist(err) {
			t.Fatalf("%s survived apply: %v", d.Key, err)
		}
	}
	for _, k := range []string{"9.compact", "10", "11"} {
		if _, err := os.Stat(filepath.Join(dir, "out", "_spark_metadata", k)); err != nil {
			t.Fatalf("apply removed a manifest readers need: %v", err)
		}
	}
	if after := data(); !slices.Equal(after, before) {
		t.Fatalf("data files changed:\n%v\n%v", before, after)
	}
	runCLI(t, dir, "retention", "apply", "--min-batches", "2", "--sink", "out", "ck").want(t, 0, "sink out: nothing to remove")
	// The query goes on: new input is processed once, nothing twice.
	filesQuery(t, dir, 12, 14)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck", "--available-now", sp).want(t, 0)
	want := make([]int, 14)
	for i := range want {
		want[i] = i
	}
	if got := outputRows(t, dir); !slices.Equal(got, want) {
		t.Fatalf("rows after retention and a restart: %v", got)
	}
	runCLI(t, dir, "inspect", "--sink", "out", "ck").want(t, 0)
}

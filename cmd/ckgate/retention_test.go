package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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
	var plan lifecycle.Result
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

package lifecycle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/lifecycle"
)

// PlanCheckpointRetention plans what ReadListing and RetentionPlan plan,
// and refuses a root with nothing under it; PlanSinkRetention refuses an
// output without a manifest log.
func TestPlanCheckpointRetention(t *testing.T) {
	ctx := context.Background()
	p := lifecycle.RetentionPolicy{MinBatches: 1, LogRetention: lifecycle.DefaultLogRetention, Now: retNow}
	if _, _, err := lifecycle.PlanCheckpointRetention(ctx, memstore.New(), p); !errors.Is(err, checkpoint.ErrNotCheckpoint) {
		t.Fatalf("empty root: %v, want ErrNotCheckpoint", err)
	}
	if _, _, err := lifecycle.PlanSinkRetention(ctx, memstore.New(), p); !errors.Is(err, checkpoint.ErrNotCheckpoint) {
		t.Fatalf("empty sink output: %v, want ErrNotCheckpoint", err)
	}
	st, err := filestore.New(filepath.Join("..", "testdata", "spark", "checkpoint-version-4.0.0", "hdfs", "join1"))
	if err != nil {
		t.Fatal(err)
	}
	l, r, err := lifecycle.PlanCheckpointRetention(ctx, st, p)
	if err != nil {
		t.Fatal(err)
	}
	want, err := lifecycle.RetentionPlan(l, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Remove) == 0 || renderPlan(r) != renderPlan(want) {
		t.Fatalf("plan:\n%s\nwant:\n%s", renderPlan(r), renderPlan(want))
	}
	// The plan's id is its removals': stable, and another for other keys.
	if id := r.ID(); !regexp.MustCompile(`^retention-[0-9a-f]{16}$`).MatchString(id) || id != want.ID() {
		t.Fatalf("ID %q, %q", id, want.ID())
	}
	fewer := *r
	fewer.Remove = r.Remove[1:]
	if fewer.ID() == r.ID() {
		t.Fatal("a plan removing fewer keys has the same id")
	}
	// A plan file made of it reads back as the same plan.
	pf := lifecycle.NewPlanFile(p, lifecycle.NewPlanTarget("/ck", "file:///ck", "q", l, r), nil)
	data, err := json.Marshal(pf)
	if err != nil {
		t.Fatal(err)
	}
	back, err := lifecycle.ParsePlanFile("plan.json", data)
	if err != nil {
		t.Fatalf("ParsePlanFile(NewPlanFile): %v\n%s", err, bytes.TrimSpace(data))
	}
	if back.Checkpoint.Result().ID() != r.ID() || !back.Created.Equal(retNow.UTC()) {
		t.Fatalf("plan file read back: %+v", back)
	}
}

package lifecycle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
)

// PlanCheckpointRetention reads the checkpoint at st and plans its
// retention under p: the listing it planned on and the plan. A root with
// nothing under it is checkpoint.ErrNotCheckpoint.
func PlanCheckpointRetention(ctx context.Context, st gateway.Store, p RetentionPolicy) (Listing, *RetentionResult, error) {
	l, err := ReadListing(ctx, st, p)
	if err != nil {
		return l, nil, err
	}
	if len(l.Objects) == 0 {
		return l, nil, fmt.Errorf("%w (nothing under it)", checkpoint.ErrNotCheckpoint)
	}
	r, err := RetentionPlan(l, p)
	return l, r, err
}

// PlanSinkRetention reads the manifest log of the file sink output at st
// and plans it under p (the sink's data files are never planned). An
// output without a manifest log is checkpoint.ErrNotCheckpoint.
func PlanSinkRetention(ctx context.Context, st gateway.Store, p RetentionPolicy) (Listing, *RetentionResult, error) {
	l, err := ReadSinkListing(ctx, st)
	if err != nil {
		return l, nil, err
	}
	r, err := RetentionPlan(l, p)
	return l, r, err
}

// ID names the plan by its content (the keys it removes, in order):
// "retention-" and 16 hex digits. The policy's retention plan carries it,
// so a decision log names the plan a delete followed.
func (r *RetentionResult) ID() string {
	h := sha256.New()
	for _, d := range r.Remove {
		fmt.Fprintf(h, "%s\n", d.Key)
	}
	return "retention-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// NewPlanFile is the reviewed plan of the checkpoint cp and the sinks,
// made under p.
func NewPlanFile(p RetentionPolicy, cp PlanTarget, sinks []PlanTarget) PlanFile {
	return PlanFile{Kind: PlanFileKind, Version: 1, Created: p.Now.UTC(), Policy: PlanPolicyOf(p), Checkpoint: cp, Sinks: sinks}
}

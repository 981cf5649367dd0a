package policy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/policy"
)

// TestGuardDryRun: a dry run lets a refused write through and records it
// as a deny with dry_run set; without a decision log it is refused at
// construction.
func TestGuardDryRun(t *testing.T) {
	ctx := context.Background()
	e := engine(t, policy.Options{})
	raw := seeded(t)
	hk := policy.Principal{ID: "cron", Kind: policy.KindHousekeeping}
	if _, _, err := policy.Guard(raw, policy.GuardConfig{Engine: e, Principal: hk, StoreURL: root, DryRun: true}); err == nil || !strings.Contains(err.Error(), "decision log") {
		t.Fatalf("dry run without a log: %v, want refused naming the decision log", err)
	}
	var buf bytes.Buffer
	log := policy.NewDecisionLog(&buf)
	g, _, err := policy.Guard(raw, policy.GuardConfig{Engine: e, Log: log, Principal: hk, StoreURL: root, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Delete(ctx, "state/0/0/1.delta", gateway.None()); err != nil {
		t.Fatalf("dry run refused: %v", err)
	}
	if _, err := raw.Stat(ctx, "state/0/0/1.delta"); err == nil {
		t.Fatal("the dry run did not let the delete through")
	}
	var rec policy.DecisionRecord
	if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &rec); err != nil {
		t.Fatalf("decision log %q: %v", buf.String(), err)
	}
	if rec.Result != "deny" || !rec.DryRun || len(rec.Rules) == 0 || rec.Rules[0] != "CKG-P004" {
		t.Fatalf("record %+v, want a dry-run deny by CKG-P004", rec)
	}
	// Without the dry run the same delete is refused.
	enforced, _, err := policy.Guard(seeded(t), policy.GuardConfig{Engine: e, Principal: hk, StoreURL: root})
	if err != nil {
		t.Fatal(err)
	}
	wantRule(t, enforced.Delete(ctx, "state/0/0/1.delta", gateway.None()), "CKG-P004")
}

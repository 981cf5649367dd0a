package policy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// conflictRules: a complete rule with two values for every put that has a
// size, read by a deny rule. Full evaluation fails on the conflict
// (eval_conflict_error) and so denies every put.
const conflictRules = `package ckgate.gateway.rules.limits

limit := 10 if input.size >= 0

limit := 20 if input.size >= 0

deny contains {"id": "LIM-1", "name": "too-big", "severity": "deny", "msg": "too big"} if input.size > limit
`

func userEngine(t testing.TB, srcs ...string) *Engine {
	t.Helper()
	dir := t.TempDir()
	for i, src := range srcs {
		if err := os.WriteFile(filepath.Join(dir, "user"+string(rune('a'+i))+".rego"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := New(context.Background(), Options{PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Class 4 of issue 14: a user rule whose complete rule conflicts denies in
// full evaluation; a job's repeated create-only puts through an Authorizer
// must be denied every time too, specialised or not.
func TestAuthorizerConflictingRuleDenies(t *testing.T) {
	e := userEngine(t, conflictRules)
	ctx := context.Background()
	in := Input{Action: "put", Key: "offsets/1", Path: "s3://bucket/team/q1/offsets/1", Root: "s3://bucket/team/q1",
		Cond: "if-absent", Size: 5, Principal: Principal{ID: "svc-q1", Kind: KindJob}, Checkpoint: Facts{QueryID: "q1"}}
	if d := e.Decide(ctx, in); d.Allow || d.Err == nil {
		t.Fatalf("full evaluation: %+v, want a fail-closed denial", d)
	}
	a := NewAuthorizer(e, Principal{ID: "svc-q1", Kind: KindJob}, "s3://bucket/team/q1", Facts{QueryID: "q1"}, nil)
	for i := range specialiseAfter + 3 {
		c := gateway.Call{Op: gateway.OpPut, Key: "offsets/" + string(rune('1'+i)), Cond: gateway.IfAbsent(), Size: 5}
		err := a.Authorize(ctx, c)
		var de *DeniedError
		if !errors.As(err, &de) || len(de.Violations) != 1 || de.Violations[0].ID != RuleFailClosed {
			t.Fatalf("call %d: %v, want a fail-closed denial as full evaluation gives", i+1, err)
		}
	}
}

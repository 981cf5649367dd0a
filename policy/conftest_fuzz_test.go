package policy_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ckgate/ckgate/policy"
)

// FuzzConftestEntry: whatever JSON value a user's deny set holds, the
// gateway denies, naming a rule; whatever a warn set holds, it allows and
// reports a warning. Nothing a rule returns makes the decision fail or
// allow a denial.
func FuzzConftestEntry(f *testing.F) {
	for _, s := range []string{`"no"`, `""`, `5`, `null`, `true`, `[]`, `["a"]`, `{}`, `{"msg": "m", "code": "C-1"}`,
		`{"msg": 7, "id": ["x"]}`, `{"id": "X", "name": "n", "severity": "warn", "msg": "w"}`, `{"severity": {"a": 1}}`,
		`{"msg": "m", "details": {"k": [1, 2]}}`, `"\u0000\ufffd"`} {
		f.Add([]byte(s))
	}
	dir := writeFiles(f, map[string]string{"fuzz.rego": "package ckgate.gateway.rules.fuzz\n\ndeny contains data.fuzz.entry if input.action == \"put\"\n\nwarn contains data.fuzz.entry if input.action == \"delete\"\n"})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		ctx := context.Background()
		e, err := policy.New(ctx, policy.Options{PolicyDirs: []string{dir}, Data: map[string]any{"fuzz": map[string]any{"entry": v}}})
		if err != nil {
			t.Fatal(err)
		}
		in := policy.Input{Action: "put", Key: "k", Location: root + "/k", Path: root + "/k", Root: root, Roots: []string{root}, Scope: root,
			Cond: "if-absent", Principal: policy.Principal{ID: "svc", Kind: policy.KindJob}, WriterSession: true}
		d := e.Decide(ctx, in)
		sev := map[bool]string{true: "warn", false: "deny"}
		obj, _ := v.(map[string]any)
		ownWarn := obj != nil && obj["severity"] == "warn"
		if d.Err != nil || d.Allow != ownWarn || len(d.Deny)+len(d.Warn) != 1 {
			t.Fatalf("deny contains %s: %+v", raw, d)
		}
		for _, x := range append(d.Deny, d.Warn...) {
			if x.ID == "" || x.Severity != sev[ownWarn] {
				t.Fatalf("deny contains %s: violation %+v", raw, x)
			}
		}
		in.Action, in.Key, in.Location, in.Path = "delete", "state/x", root+"/state/x", root+"/state/x"
		d = e.Decide(ctx, in)
		ownDeny := obj != nil && obj["severity"] == "deny"
		if d.Err != nil || d.Allow == ownDeny || len(d.Deny)+len(d.Warn) != 1 {
			t.Fatalf("warn contains %s: %+v", raw, d)
		}
	})
}

package policy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/policy"
)

// conftestPolicy is a user policy written the conftest way: deny and warn
// sets of strings and of {"msg", "code"} objects.
const conftestPolicy = `package ckgate.gateway.rules.team

deny contains msg if {
	input.action == "put"
	endswith(input.location, ".exe")
	msg := sprintf("no executables: %s", [input.location])
}

deny contains {"msg": "no temporary files", "code": "TEAM-007"} if {
	input.action == "put"
	endswith(input.location, ".tmp")
}

warn contains msg if {
	input.action == "put"
	endswith(input.location, ".bak")
	msg := sprintf("a backup file: %s", [input.location])
}

warn contains {"msg": "an odd file", "code": "TEAM-W1", "details": {"suffix": ".odd"}} if {
	input.action == "put"
	endswith(input.location, ".odd")
}
`

// Conftest-style rules decide: a string or object in deny refuses (named
// by its code, or by the package), one in warn allows and is reported, on
// the full evaluation and on the specialised one alike.
func TestConftestStyleRules(t *testing.T) {
	ctx := context.Background()
	dir := writeFiles(t, map[string]string{"team.rego": conftestPolicy})
	e := engine(t, policy.Options{PolicyDirs: []string{dir}})
	job := policy.Principal{ID: "svc", Kind: policy.KindJob}
	for _, tc := range []struct {
		key        string
		allow      bool
		id, msg    string // the denial or the warning
		warnings   int
		notDenying bool
	}{
		{"out/a.exe", false, "team", "no executables: s3://bucket/team/q1/out/a.exe", 0, false},
		{"out/a.tmp", false, "TEAM-007", "no temporary files", 0, false},
		{"out/a.bak", true, "team", "a backup file: s3://bucket/team/q1/out/a.bak", 1, true},
		{"out/a.odd", true, "TEAM-W1", "an odd file", 1, true},
		{"out/a.txt", true, "", "", 0, true},
	} {
		t.Run(tc.key, func(t *testing.T) {
			in := policy.Input{Action: "put", Key: tc.key, Location: root + "/" + tc.key, Path: root + "/" + tc.key,
				Root: root, Roots: []string{root}, Scope: root, Cond: "if-absent", Principal: job, Checkpoint: policy.Facts{QueryID: "q1"}}
			d := e.Decide(ctx, in)
			if d.Allow != tc.allow || d.Err != nil {
				t.Fatalf("decision %+v, want allow %v", d, tc.allow)
			}
			vs := d.Deny
			if tc.allow {
				vs = d.Warn
				if len(d.Deny) != 0 {
					t.Fatalf("allowed with denials %+v", d.Deny)
				}
			}
			if len(d.Warn) != tc.warnings {
				t.Fatalf("warnings %+v, want %d", d.Warn, tc.warnings)
			}
			if tc.id == "" {
				if len(vs) != 0 {
					t.Fatalf("violations %+v, want none", vs)
				}
				return
			}
			if len(vs) != 1 || vs[0].ID != tc.id || vs[0].Msg != tc.msg || vs[0].Name != "team" {
				t.Fatalf("violations %+v, want one %s %q by package team", vs, tc.id, tc.msg)
			}

			// Through an authorizer: its third call of one shape is decided
			// by the specialised policy.
			var warned []policy.Warning
			a := policy.NewAuthorizer(e, job, root, policy.Facts{QueryID: "q1"}, nil, policy.WithWriterSession(),
				policy.WithWarn(func(w policy.Warning) { warned = append(warned, w) }))
			s := gateway.WithAuthorizer(memstore.New(), a)
			for i := range 3 {
				_, err := s.Put(ctx, strings.Repeat("x/", i)+tc.key, []byte("x"), gateway.IfAbsent())
				if tc.allow != (err == nil) {
					t.Fatalf("call %d: %v, want allow %v", i, err, tc.allow)
				}
				if !tc.allow && !strings.Contains(err.Error(), tc.msg[:10]) {
					t.Fatalf("call %d: %v does not name the message %q", i, err, tc.msg)
				}
			}
			if len(warned) != 3*tc.warnings {
				t.Fatalf("warnings reported %+v, want %d", warned, 3*tc.warnings)
			}
			if tc.warnings > 0 && !strings.Contains(warned[0].String(), tc.id) {
				t.Fatalf("warning %q does not name %s", warned[0].String(), tc.id)
			}
		})
	}
}

// Anything a deny set holds denies, whatever its shape; nothing a warn set
// holds does.
func TestDenyEntryOfAnyShapeDenies(t *testing.T) {
	ctx := context.Background()
	for _, v := range []string{`5`, `true`, `null`, `["a", 1]`, `{"code": 7}`, `{"msg": 3}`, `{"id": ""}`, `""`, `{}`, `{"severity": "info", "msg": "x"}`} {
		src := "package ckgate.gateway.rules.odd\n\ndeny contains " + v + " if input.action == \"put\"\n\nwarn contains " + v + " if input.action == \"delete\"\n"
		e := engine(t, policy.Options{PolicyDirs: []string{writeFiles(t, map[string]string{"odd.rego": src})}})
		in := policy.Input{Action: "put", Key: "k", Location: root + "/k", Path: root + "/k", Root: root, Roots: []string{root}, Scope: root,
			Cond: "if-absent", Principal: policy.Principal{ID: "svc", Kind: policy.KindJob}, WriterSession: true}
		if d := e.Decide(ctx, in); d.Allow || len(d.Deny) != 1 || d.Deny[0].ID == "" {
			t.Errorf("deny contains %s: %+v, want one denial", v, d)
		}
		in.Action, in.Key, in.Location, in.Path = "delete", "state/x", root+"/state/x", root+"/state/x"
		if d := e.Decide(ctx, in); !d.Allow || len(d.Warn) != 1 {
			t.Errorf("warn contains %s: %+v, want allowed with one warning", v, d)
		}
	}
}

// A decision rule the gateway would never read does not load: tested by
// policy test, never enforced.
func TestMisplacedDecisionRulesRefused(t *testing.T) {
	ctx := context.Background()
	for name, src := range map[string]string{
		"conftest main":   "package main\n\ndeny contains \"no\" if input.action == \"put\"\n",
		"nested package":  "package ckgate.gateway.rules.team.sizes\n\ndeny contains \"no\" if input.action == \"put\"\n",
		"boolean deny":    "package ckgate.gateway.rules.team\n\ndeny if input.action == \"put\"\n",
		"deny_ prefix":    "package ckgate.gateway.rules.team\n\ndeny_big contains \"no\" if input.size > 1\n",
		"violation":       "package ckgate.gateway.rules.team\n\nviolation contains {\"msg\": \"no\"} if input.size > 1\n",
		"warn in audit":   "package ckgate.audit.rules.team\n\nwarn contains \"no\" if input.size > 1\n",
		"rules itself":    "package ckgate.gateway.rules\n\ndeny contains \"no\" if input.size > 1\n",
		"deny as partial": "package ckgate.gateway.rules.team\n\ndeny.big := \"no\" if input.size > 1\n",
		"ckgate's own":    "# a user's\n\npackage ckgate.gateway.rules.defaults\n\nallow_all if true\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"p.rego": src})
			_, err := policy.New(ctx, policy.Options{PolicyDirs: []string{dir}})
			if err == nil || !strings.Contains(err.Error(), "p.rego:3") {
				t.Fatalf("New: %v, want a refusal naming p.rego:3", err)
			}
			if _, err := policy.RunTests(ctx, policy.TestOptions{Dirs: []string{dir}}); err == nil || !strings.Contains(err.Error(), "p.rego:3") {
				t.Fatalf("RunTests: %v, want the same refusal", err)
			}
		})
	}
	// helpers named like decisions are fine: a function, a test package
	dir := writeFiles(t, map[string]string{
		"p.rego":      "package ckgate.gateway.rules.team\n\nviolation(msg) := {\"msg\": msg}\n\ndeny contains violation(\"no\") if input.size > 1\n",
		"p_test.rego": "package main\n\ndeny_test if true\n",
	})
	if _, err := policy.New(ctx, policy.Options{PolicyDirs: []string{dir}}); err != nil {
		t.Fatal(err)
	}
}

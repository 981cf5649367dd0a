package policy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/internal/benchsum"
)

// userRules join the defaults in the specialisation tests: they read the
// key, the size and the stream flag, which vary between the calls of one
// shape, and a warning that must not deny.
const userRules = `package ckgate.gateway.rules.user

deny contains {"id": "USR-1", "name": "big-state", "severity": "deny", "msg": sprintf("%s is %d bytes", [input.key, input.size])} if {
	input.action == "put"
	startswith(input.key, "state/")
	input.size > 1000000
}

deny contains {"id": "USR-2", "name": "no-streams-in-tmp", "severity": "deny", "msg": "no streams"} if {
	input.stream
	contains(input.path, "/tmp/")
}

deny contains {"id": "USR-3", "name": "odd", "severity": "warn", "msg": "a warning only"} if endswith(input.key, ".odd")
`

func specialEngine(t testing.TB, o Options) *Engine {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "user.rego"), []byte(userRules), 0o644); err != nil {
		t.Fatal(err)
	}
	o.PolicyDirs = append(o.PolicyDirs, dir)
	e, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// specialAuthorizers are principals and checkpoints of every kind the
// default rules know.
func specialAuthorizers(e *Engine) map[string]*Authorizer {
	const root = "s3://bucket/team/q1"
	facts := Facts{QueryID: "q1"}
	known := []KnownQuery{{QueryID: "q2", Root: "s3://bucket/team/q2"}}
	plan := &Plan{ID: "p1", Obsolete: map[string]string{"offsets/0": "before 1", "state/0/0/1.delta": "snapshot 4"}}
	exists := memstore.New()
	for _, k := range []string{"offsets/0", "commits/0"} {
		if _, err := exists.Put(context.Background(), k, []byte("x"), gateway.IfAbsent()); err != nil {
			panic(err)
		}
	}
	owned := memstore.New() // a root owned by svc-q1 whose committer fenced process "old"
	for k, v := range map[string]string{"offsets/0": "x", "commits/0": "x", RootOwnerKey: `{"principal":"svc-q1","kind":"job"}`,
		gateway.CommitterKey: `{"process":"new","batch":0,"fenced":["old"]}`} {
		if _, err := owned.Put(context.Background(), k, []byte(v), gateway.IfAbsent()); err != nil {
			panic(err)
		}
	}
	return map[string]*Authorizer{
		"job":              NewAuthorizer(e, Principal{ID: "svc-q1", Kind: KindJob}, root, facts, nil, WithWriterSession()),
		"job-owned":        NewAuthorizer(e, Principal{ID: "svc-q1", Kind: KindJob}, root, facts, nil, WithExists(owned), WithRootOwners(), WithWriterSession()),
		"job-exists":       NewAuthorizer(e, Principal{ID: "svc-q1", Kind: KindJob}, root, facts, nil, WithExists(exists), WithWriterSession()),
		"job-bucket":       NewAuthorizer(e, Principal{ID: "svc-q1", Kind: KindJob}, root, facts, nil, WithStoreURL("s3://bucket"), WithWriterSession()),
		"job-no-session":   NewAuthorizer(e, Principal{ID: "svc-q1", Kind: KindJob}, root, facts, nil),
		"archive":          NewAuthorizer(e, Principal{ID: "arch", Kind: KindArchive}, root, facts, nil),
		"retention":        NewAuthorizer(e, Principal{ID: "ret", Kind: KindRetention}, root, facts, nil, WithPlan(plan)),
		"retention-noplan": NewAuthorizer(e, Principal{ID: "ret", Kind: KindRetention}, root, facts, nil),
		"housekeeping":     NewAuthorizer(e, Principal{ID: "cron", Kind: KindHousekeeping}, root, facts, nil, WithKnownQueries(known)),
		"admin":            NewAuthorizer(e, Principal{ID: "alice", Kind: KindAdmin}, root, facts, nil),
		"admin-reason":     NewAuthorizer(e, Principal{ID: "alice", Kind: KindAdmin, Reason: "INC-1"}, root, facts, nil),
		"unknown-kind":     NewAuthorizer(e, Principal{ID: "x", Kind: "intern"}, root, facts, nil),
		"no-root":          NewAuthorizer(e, Principal{ID: "svc", Kind: KindJob}, "", facts, nil),
	}
}

// specialCalls: puts and deletes of every kind of key, under every
// condition, allowed and refused.
func specialCalls() []gateway.Call {
	var calls []gateway.Call
	keys := []string{"offsets/0", "offsets/17", "commits/17", "offsets/.17.tmp", "offsets/17/x", "state/0/3/18.delta",
		"state/0/0/1.delta", "_ckgate/writer", "metadata", "sources/0/0", "out/_spark_metadata/9", "out/_spark_metadata/9.compact",
		"team/q2/offsets/1", "team/q1/offsets/5", "team/q1/state/0/0/2.delta", "tmp/x.odd", "../escape", "", "17", "("}
	conds := []gateway.Cond{gateway.None(), gateway.IfAbsent(), gateway.IfMatch("v1")}
	for _, k := range keys {
		for _, c := range conds {
			calls = append(calls,
				gateway.Call{Op: gateway.OpPut, Key: k, Cond: c, Size: 200},
				gateway.Call{Op: gateway.OpPut, Key: k, Cond: c, Size: 2_000_000},
				gateway.Call{Op: gateway.OpPut, Key: k, Cond: c, Size: -1, Stream: true})
		}
		calls = append(calls, gateway.Call{Op: gateway.OpDelete, Key: k, Cond: gateway.None()},
			gateway.Call{Op: gateway.OpDelete, Key: k, Cond: gateway.IfMatch("v1")})
	}
	return calls
}

// checkSpecial decides c through a's specialisation and in full, and
// fails on any difference. It reports whether the specialisation decided
// (rather than handing the call to the full evaluation).
func checkSpecial(t testing.TB, a *Authorizer, c gateway.Call) bool {
	t.Helper()
	ctx := context.Background()
	in, shape := a.testInput(ctx, c)
	full := a.engine.decide(ctx, in)
	for range specialiseAfter - 1 {
		a.special(ctx, shape, in)
	}
	sp := a.special(ctx, shape, in)
	if sp == nil {
		return false
	}
	if !a.engine.allows(ctx, sp, in) {
		return false
	}
	if !reflect.DeepEqual(sp.allow, full) {
		t.Fatalf("%s %q (%+v): specialised %+v, full %+v", c.Op, c.Key, c.Cond, sp.allow, full)
	}
	return true
}

func TestSpecialisedDecisionsMatchFull(t *testing.T) {
	e := specialEngine(t, Options{})
	decided := map[string]int{}
	as := specialAuthorizers(e)
	for name, a := range as {
		for _, c := range specialCalls() {
			if checkSpecial(t, a, c) {
				decided[name]++
			}
		}
	}
	// The specialisation decides the allowed calls of every kind of
	// principal; the refused ones it hands to the full evaluation, which
	// checkSpecial's comparison covers (an allowed refusal fails it). An
	// admin stating a reason is not specialised: the decision then depends
	// on whether there are violations (break glass), in two residuals.
	for _, name := range []string{"job", "job-exists", "job-bucket", "retention", "housekeeping", "admin", "unknown-kind"} {
		if decided[name] == 0 {
			var errs []error
			for _, st := range as[name].shapes {
				errs = append(errs, st.err)
			}
			t.Errorf("%s: no call decided by a specialisation: %v", name, errs)
		}
	}
	t.Logf("calls decided by a specialisation: %v", decided)
}

// The calls an Authorizer makes through Authorize, specialised, give the
// same allow or refusal, naming the same rules, as the full evaluation.
func TestAuthorizeSpecialisedMatchesEvaluate(t *testing.T) {
	e := specialEngine(t, Options{})
	ctx := context.Background()
	as := specialAuthorizers(e)
	for _, name := range []string{"job", "job-exists", "retention", "admin-reason"} {
		a := as[name]
		for round := range specialiseAfter + 1 {
			for _, c := range specialCalls() {
				in, _ := a.testInput(ctx, c)
				want := e.decide(ctx, in)
				err := a.check(ctx, c)
				if gateway.ValidateKey("put", c.Key) != nil {
					// a key the store refuses is refused before any policy
					if err == nil {
						t.Fatalf("%s %s %q: an invalid key was allowed", name, c.Op, c.Key)
					}
					continue
				}
				var de *DeniedError
				switch {
				case want.Allow && !want.BreakGlass && err != nil:
					t.Fatalf("%s round %d %s %q: refused (%v), full evaluation allows", name, round, c.Op, c.Key, err)
				case !want.Allow && !errors.As(err, &de):
					t.Fatalf("%s round %d %s %q: %v, full evaluation refuses by %v", name, round, c.Op, c.Key, err, want.Rules())
				case !want.Allow && !reflect.DeepEqual(de.Violations, want.Deny):
					t.Fatalf("%s round %d %s %q: refused by %v, full evaluation by %v", name, round, c.Op, c.Key, de.Violations, want.Deny)
				}
			}
		}
	}
	a := as["job"]
	specialised := 0
	for _, st := range a.shapes {
		if st.sp != nil {
			specialised++
		} else if st.tried {
			t.Errorf("a shape of the job was not specialised: %v", st.err)
		}
	}
	if specialised == 0 {
		t.Fatal("the job's Authorizer specialised no shape")
	}
}

// A decision that reads an input field of its own (not only through the
// violation set) is not specialised, and is decided in full.
func TestDecisionReadingInputNotSpecialised(t *testing.T) {
	dir := t.TempDir()
	src := `package ckgate.gateway

violations contains "too big" if input.size > 10

decision := {"allow": count(violations) == 0, "deny": [{"id": "X-1", "name": "x", "severity": "deny", "msg": v} | some v in violations], "reason": input.key}
`
	if err := os.WriteFile(filepath.Join(dir, "d.rego"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := New(context.Background(), Options{NoDefaults: true, PolicyDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	a := NewAuthorizer(e, Principal{ID: "svc", Kind: KindJob}, "s3://b/q", Facts{QueryID: "q"}, nil)
	ctx := context.Background()
	c := gateway.Call{Op: gateway.OpPut, Key: "offsets/1", Cond: gateway.IfAbsent(), Size: 5}
	in, shape := a.testInput(ctx, c)
	for range specialiseAfter {
		a.special(ctx, shape, in)
	}
	st := a.shapes[shape]
	if st.sp != nil || !errors.Is(st.err, errNotSpecialisable) {
		t.Fatalf("specialised a decision that reads input.key: sp %v, err %v", st.sp != nil, st.err)
	}
	if err := a.check(ctx, c); err != nil {
		t.Fatal(err)
	}
	c.Size = 11
	if err := a.check(ctx, c); err == nil {
		t.Fatal("a put of 11 bytes allowed")
	}
}

// FuzzSpecialised: whatever the key, size and condition, a specialised
// decision equals the full one, for the defaults with user rules that
// cannot fail (rules 0) and with each of hostileRules (rules 1...), rules
// that conflict or fail for some inputs: the Authorizer's answer and the
// rules it names are the full evaluation's.
func FuzzSpecialised(f *testing.F) {
	for _, c := range specialCalls() {
		f.Add(c.Key, c.Op == gateway.OpDelete, uint8(c.Cond.Kind), c.Size, c.Stream, uint8(0), uint8(0))
	}
	for i := range hostileRules {
		for _, c := range []gateway.Call{
			{Op: gateway.OpPut, Key: "offsets/17", Cond: gateway.IfAbsent(), Size: 5},
			{Op: gateway.OpPut, Key: "commits/17", Cond: gateway.None(), Size: 200},
			{Op: gateway.OpPut, Key: "state/0/3/18.delta", Cond: gateway.None(), Size: 2_000_000},
			{Op: gateway.OpPut, Key: "(", Cond: gateway.IfAbsent(), Size: 7},
			{Op: gateway.OpDelete, Key: "17", Cond: gateway.None()},
		} {
			f.Add(c.Key, c.Op == gateway.OpDelete, uint8(c.Cond.Kind), c.Size, c.Stream, uint8(i), uint8(i+1))
		}
	}
	names := []string{"job", "job-exists", "job-bucket", "retention", "retention-noplan", "housekeeping", "admin", "admin-reason", "unknown-kind", "no-root"}
	engines := []map[string]*Authorizer{specialAuthorizers(specialEngine(f, Options{}))}
	for _, h := range hostileRules {
		engines = append(engines, specialAuthorizers(userEngineData(f, h.data, h.src)))
	}
	f.Fuzz(func(t *testing.T, key string, del bool, cond uint8, size int64, stream bool, who, rules uint8) {
		c := gateway.Call{Op: gateway.OpPut, Key: key, Size: size, Stream: stream}
		switch cond % 3 {
		case 0:
			c.Cond = gateway.None()
		case 1:
			c.Cond = gateway.IfAbsent()
		default:
			c.Cond = gateway.IfMatch("v")
		}
		if del {
			c.Op = gateway.OpDelete
		}
		a := engines[int(rules)%len(engines)][names[int(who)%len(names)]]
		checkSpecial(t, a, c)
		sameAsFull(t, a, c)
	})
}

// BenchmarkSpecialise: the one-time cost of specialising a call shape
// (partial evaluation, compile, the decision without violations), which
// an Authorizer pays on a shape's second call.
func BenchmarkSpecialise(b *testing.B) {
	e, err := New(context.Background(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	a := NewAuthorizer(e, Principal{ID: "svc-q1", Kind: KindJob}, "s3://bucket/team/q1", Facts{QueryID: "q1"}, nil)
	c := gateway.Call{Op: gateway.OpPut, Key: "offsets/1", Cond: gateway.IfAbsent(), Size: 5}
	in, _ := a.testInput(context.Background(), c)
	known, err := knownPart(in)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for b.Loop() {
		if _, err := e.specialise(context.Background(), known); err != nil {
			b.Fatal(err)
		}
	}
	benchsum.Record(b, "policy_specialise_ms", float64(time.Since(start).Microseconds())/1e3/float64(b.N), "ms", "")
}

// Every field an Authorizer's input holds is either shared by its shape
// or unknown to the partial evaluation.
func TestKnownPartCoversInput(t *testing.T) {
	e := specialEngine(t, Options{})
	ctx := context.Background()
	for name, a := range specialAuthorizers(e) {
		for _, c := range specialCalls() {
			in, _ := a.testInput(ctx, c)
			if _, err := knownPart(in); err != nil {
				t.Fatalf("%s %s %q: %v", name, c.Op, c.Key, err)
			}
		}
	}
	in := ast.NewObject(item("action", str("put")), item("mystery", str("x")))
	if _, err := knownPart(in); !errors.Is(err, errNotSpecialisable) {
		t.Fatalf("an input field neither shared nor unknown: %v", err)
	}
}

// conflictRules: a complete rule with two values for every put that has a
// size, read by a deny rule. Full evaluation fails on the conflict
// (eval_conflict_error) and so denies every put.
const conflictRules = `package ckgate.gateway.rules.limits

limit := 10 if input.size >= 0

limit := 20 if input.size >= 0

deny contains {"id": "LIM-1", "name": "too-big", "severity": "deny", "msg": "too big"} if input.size > limit
`

type hostile struct {
	name, src   string
	data        map[string]any // data for the engine, besides the defaults'
	specialises bool           // the equality check admits it: some shape is specialised
}

// hostileRules are user modules that can conflict or fail for some of the
// inputs of one call shape (each joins the defaults in an engine of its
// own), and, last, modules the equality check lets a shape specialise.
// For every one, an Authorizer decides exactly as the full evaluation.
var hostileRules = []hostile{
	{name: "conflict", src: conflictRules},
	{name: "conflict-some-keys", src: `package ckgate.gateway.rules.h

limit := 10 if startswith(input.key, "state/")

limit := 20 if endswith(input.key, ".delta")

deny contains {"id": "H-1", "name": "h", "severity": "deny", "msg": "over the limit"} if input.size > limit
`},
	{name: "conflict-function", src: `package ckgate.gateway.rules.h

f(k) := 1 if startswith(k, "offsets/")

f(k) := 2 if endswith(k, "7")

deny contains {"id": "H-2", "name": "h", "severity": "deny", "msg": "three"} if f(input.key) == 3
`},
	{name: "function-two-outputs", src: `package ckgate.gateway.rules.h

g(k) := n if {
	startswith(k, "commits/")
	some n in [1, 2]
}

deny contains {"id": "H-3", "name": "h", "severity": "deny", "msg": "nine"} if g(input.key) == 9
`},
	{name: "object-rule-conflict", src: `package ckgate.gateway.rules.h

sizes[input.key] := input.size if input.action == "put"

sizes[input.key] := 0 if endswith(input.key, "17")

deny contains {"id": "H-4", "name": "h", "severity": "deny", "msg": "negative"} if sizes[input.key] < 0
`},
	{name: "type-error", src: `package ckgate.gateway.rules.h

deny contains {"id": "H-5", "name": "h", "severity": "deny", "msg": "huge"} if input.size + input.key > 0
`},
	{name: "type-error-then-false", src: `package ckgate.gateway.rules.h

deny contains {"id": "H-5", "name": "h", "severity": "deny", "msg": "huge"} if {
	input.size + input.key > 0
	count(input.principal.kind) > 10
}
`},
	{name: "to-number-warning", src: `package ckgate.gateway.rules.h

deny contains {"id": "H-6", "name": "h", "severity": "warn", "msg": "numbered"} if to_number(input.key) > 3
`},
	{name: "to-number-deny", src: `package ckgate.gateway.rules.h

deny contains {"id": "H-7", "name": "h", "severity": "deny", "msg": "far ahead"} if {
	startswith(input.key, "offsets/") == false
	to_number(input.key) > 100
	input.action == "delete"
}
`},
	{name: "divide-by-zero", src: `package ckgate.gateway.rules.h

deny contains {"id": "H-8", "name": "h", "severity": "deny", "msg": "ratio"} if {
	input.size / (input.size - 200) > 1000
	count(input.action) > 10 # not indexed: evaluated after the division
}
`},
	{name: "regex-from-key", src: `package ckgate.gateway.rules.h

deny contains {"id": "H-9", "name": "h", "severity": "warn", "msg": "self-match"} if regex.match(input.key, "x")
`},
	{name: "undefined-ref", src: `package ckgate.gateway.rules.h

deny contains {"id": "H-10", "name": "h", "severity": "deny", "msg": "never"} if data.nothing.here[input.key] == input.size

deny contains {"id": "H-11", "name": "h", "severity": "deny", "msg": "no plan"} if input.plan.obsolete[input.key] == 7
`, specialises: true},
	{name: "else-chain", src: `package ckgate.gateway.rules.h

level := "big" if input.size > 1000 else := "small" if input.size >= 0

level := "small" if endswith(input.key, ".delta")

deny contains {"id": "H-12", "name": "h", "severity": "deny", "msg": "big state"} if {
	startswith(input.key, "state/")
	level == "big"
}
`},
	{name: "with", src: `package ckgate.gateway.rules.h

over if input.size + 1 > 0

deny contains {"id": "H-13", "name": "h", "severity": "deny", "msg": "over"} if {
	startswith(input.key, "state/")
	over with input.size as input.key
	input.action == "delete"
}
`},
	{name: "every", src: `package ckgate.gateway.rules.h

deny contains {"id": "H-14", "name": "h", "severity": "deny", "msg": "digits"} if {
	startswith(input.key, "offsets/")
	every c in split(input.key, "/") { to_number(c) >= 0 }
}
`},
	{name: "conflicts-with-a-default", src: `package ckgate.lib

principal_kind := "job" if input.size > 100
`},
	{name: "user-default-function-conflict", src: `package ckgate.lib

dir(root) := "x" if endswith(root, "q1")
`},
	{name: "user-violation-not-object", src: `package ckgate.gateway

violations contains 5 if endswith(input.key, "17")
`, specialises: true},
	{name: "data-of-odd-kinds", src: userRules, specialises: true, data: map[string]any{"ckgate": map[string]any{
		// known queries' roots of the wrong kind are refused at load
		// (TestEngineRefusesMalformedKnownQueries); a query id of another kind is not
		"queries":   []any{map[string]any{"query_id": 9, "root": "s3://bucket/team/q9"}},
		"retention": map[string]any{"plans": map[string]any{"s3://bucket/team/q1": map[string]any{"obsolete": []any{"offsets/17"}}}},
	}}},
	{name: "data-at-a-rule", src: userRules, data: map[string]any{"ckgate": map[string]any{"gateway": map[string]any{"rules": map[string]any{
		"user": map[string]any{"deny": []any{map[string]any{"id": "D-1", "name": "d", "severity": "deny", "msg": "from data"}}},
	}}}}},
	{name: "object-comprehension", src: `package ckgate.gateway.rules.h

deny contains {"id": "H-17", "name": "h", "severity": "deny", "msg": "two"} if {
	sizes := {k: v | some k in ["a", "a"]; some v in [input.size, 1]}
	count(sizes) > 5
}
`},
	{name: "safe", src: userRules, specialises: true},
	{name: "safe-lib", src: `package ckgate.gateway.rules.h

import data.ckgate.lib

deny contains lib.violation("H-15", sprintf("%s: %d bytes in %s", [input.key, input.size, lib.principal_kind])) if {
	input.size > 10 * 1024
	lib.inside(input.path, concat("/", [input.root, "tmp"]))
	count(input.key) > 3
}

deny contains lib.violation("H-16", "odd") if {
	some k, _ in input.plan.obsolete
	k == input.key
	lower(k) != k
}
`, specialises: true},
}

func userEngine(t testing.TB, srcs ...string) *Engine {
	t.Helper()
	return userEngineData(t, nil, srcs...)
}

func userEngineData(t testing.TB, data map[string]any, srcs ...string) *Engine {
	t.Helper()
	dir := t.TempDir()
	for i, src := range srcs {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("user%d.rego", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := New(context.Background(), Options{PolicyDirs: []string{dir}, Data: data})
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
		c := gateway.Call{Op: gateway.OpPut, Key: fmt.Sprintf("offsets/%d", i+1), Cond: gateway.IfAbsent(), Size: 5}
		err := a.check(ctx, c)
		var de *DeniedError
		if !errors.As(err, &de) || len(de.Violations) != 1 || de.Violations[0].ID != RuleFailClosed {
			t.Fatalf("call %d: %v, want a fail-closed denial as full evaluation gives", i+1, err)
		}
	}
	for _, st := range a.shapes {
		if st.sp != nil || !errors.Is(st.err, errNotSpecialisable) || !strings.Contains(st.err.Error(), "limits.limit") {
			t.Fatalf("the shape: specialised %v, %v; want not specialisable, naming the rule", st.sp != nil, st.err)
		}
	}
}

// hostileCalls are puts and deletes of one key of each kind the hostile
// rules tell apart, under every condition, of sizes on both sides of their
// limits.
func hostileCalls() []gateway.Call {
	var calls []gateway.Call
	for _, k := range []string{"offsets/17", "commits/17", "offsets/.17.tmp", "state/0/3/18.delta", "_ckgate/writer",
		"team/q2/offsets/1", "tmp/x.odd", "17", "(", ""} {
		for _, c := range []gateway.Cond{gateway.None(), gateway.IfAbsent(), gateway.IfMatch("v1")} {
			for _, size := range []int64{5, 200, 2_000_000} {
				calls = append(calls, gateway.Call{Op: gateway.OpPut, Key: k, Cond: c, Size: size})
			}
			calls = append(calls, gateway.Call{Op: gateway.OpPut, Key: k, Cond: c, Size: -1, Stream: true})
		}
		calls = append(calls, gateway.Call{Op: gateway.OpDelete, Key: k, Cond: gateway.None()},
			gateway.Call{Op: gateway.OpDelete, Key: k, Cond: gateway.IfMatch("v1")})
	}
	return calls
}

// sameAsFull decides c through a (Authorize, specialised from a shape's
// specialiseAfter-th call on) and in full, and fails on any difference in
// the answer or the rules named.
func sameAsFull(t testing.TB, a *Authorizer, c gateway.Call) {
	t.Helper()
	ctx := context.Background()
	in, _ := a.testInput(ctx, c)
	want := a.engine.decide(ctx, in)
	err := a.check(ctx, c)
	if gateway.ValidateKey(string(c.Op), c.Key) != nil {
		if !errors.Is(err, gateway.ErrInvalidKey) {
			t.Fatalf("%s %q: an invalid key was not refused as one: %v", c.Op, c.Key, err)
		}
		return // refused before any policy, as the store would
	}
	var de *DeniedError
	switch {
	case want.Allow && !want.BreakGlass && err != nil:
		t.Fatalf("%s %q %+v size %d: refused (%v), full evaluation allows", c.Op, c.Key, c.Cond, c.Size, err)
	case !want.Allow && !errors.As(err, &de):
		t.Fatalf("%s %q %+v size %d: %v, full evaluation refuses by %v (%v)", c.Op, c.Key, c.Cond, c.Size, err, want.Rules(), want.Err)
	case !want.Allow && !reflect.DeepEqual(de.Violations, want.Deny):
		t.Fatalf("%s %q %+v size %d: refused by %v, full evaluation by %v", c.Op, c.Key, c.Cond, c.Size, de.Violations, want.Deny)
	}
}

// Differential: with user rules that conflict or fail for some inputs,
// every call of every kind of principal, repeated past specialisation,
// gets the full evaluation's decision; the rules that cannot fail still
// get specialised shapes.
func TestSpecialisedHostileRulesMatchFull(t *testing.T) {
	for _, h := range hostileRules {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			e := userEngineData(t, h.data, h.src)
			specialised := 0
			for _, a := range specialAuthorizers(e) {
				// Every shape has more than specialiseAfter calls: the
				// later ones are decided by its specialisation, if any.
				for _, c := range hostileCalls() {
					sameAsFull(t, a, c)
				}
				for _, st := range a.shapes {
					if st.sp != nil {
						specialised++
					}
				}
			}
			if h.specialises && specialised == 0 {
				t.Errorf("no shape specialised")
			}
			if !h.specialises && specialised > 0 {
				t.Errorf("%d shapes specialised on rules that can fail", specialised)
			}
		})
	}
}

// The equality check names why a shape is decided in full.
func TestProvablyEqualReasons(t *testing.T) {
	want := map[string]string{
		"conflict":                       "values 10 and 20",
		"conflict-some-keys":             "values 10 and 20",
		"conflict-function":              "values 1 and 2",
		"function-two-outputs":           "value computed by its body",
		"object-rule-conflict":           "partial object rule",
		"type-error":                     "calls plus",
		"type-error-then-false":          "calls plus",
		"to-number-warning":              "calls to_number",
		"to-number-deny":                 "calls to_number",
		"divide-by-zero":                 "calls div",
		"regex-from-key":                 "calls regex.match",
		"else-chain":                     "else branch",
		"with":                           "uses with",
		"every":                          "uses every",
		"conflicts-with-a-default":       "value computed by its body",
		"user-default-function-conflict": "else branch",
		"data-at-a-rule":                 "data sets data.ckgate.gateway.rules.user",
		"object-comprehension":           "object comprehension",
	}
	known := ast.NewObject(item("action", str("put")), item("root", str("s3://b/q")), item("cond", str("if-absent")),
		item("principal", Principal{ID: "j", Kind: KindJob}.term()), item("checkpoint", Facts{QueryID: "q"}.term()))
	for _, h := range hostileRules {
		err := userEngineData(t, h.data, h.src).provablyEqual(known)
		w, ok := want[h.name]
		switch {
		case !ok && h.specialises && err != nil:
			t.Errorf("%s: %v", h.name, err)
		case ok && (!errors.Is(err, errNotSpecialisable) || !strings.Contains(err.Error(), w)):
			t.Errorf("%s: %v, want an error saying %q", h.name, err, w)
		}
	}
	if missing := slices.DeleteFunc(slices.Collect(maps.Keys(want)), func(n string) bool {
		return slices.ContainsFunc(hostileRules, func(h hostile) bool { return h.name == n })
	}); len(missing) > 0 {
		t.Errorf("no such hostile rules: %v", missing)
	}
}

// Every field of specialInputs an Authorizer's input holds has the kind
// the equality check assumes for it.
func TestSpecialInputsKinds(t *testing.T) {
	e := specialEngine(t, Options{})
	ctx := gateway.WithWriterProcess(context.Background(), "old") // a zombie, for input.process

	seen := map[string]bool{}
	for name, a := range specialAuthorizers(e) {
		for _, c := range append(specialCalls(), hostileCalls()...) {
			in, _ := a.testInput(ctx, c)
			for _, f := range specialInputs {
				v := in.Get(ast.StringTerm(f.key))
				if v == nil {
					continue
				}
				seen[f.key] = true
				if k := kindOfValue(v.Value); k != f.kind {
					t.Fatalf("%s %s %q: input.%s is %v of kind %d, specialInputs says %d", name, c.Op, c.Key, f.key, v, k, f.kind)
				}
			}
		}
	}
	for _, f := range specialInputs {
		if !seen[f.key] {
			t.Errorf("no input has input.%s", f.key)
		}
	}
}

// Authorizers of one engine specialise their shapes concurrently (the
// equality check, partial evaluation) and still decide as the full
// evaluation (run with -race).
func TestSpecialisedConcurrently(t *testing.T) {
	for _, e := range []*Engine{specialEngine(t, Options{}), userEngine(t, hostileRules[0].src)} {
		ctx := context.Background()
		as := specialAuthorizers(e)
		var wg sync.WaitGroup
		for _, name := range []string{"job", "job-exists", "retention", "housekeeping"} {
			a := as[name]
			for w := range 2 {
				wg.Go(func() {
					calls := hostileCalls()
					for i := range calls {
						c := calls[(i+w*7)%len(calls)]
						if gateway.ValidateKey(string(c.Op), c.Key) != nil {
							continue // refused before any policy (sameAsFull)
						}
						in, _ := a.testInput(ctx, c)
						want := e.decide(ctx, in)
						err := a.check(ctx, c)
						var de *DeniedError
						switch {
						case want.Allow != (err == nil):
							t.Errorf("%s %s %q: %v, full evaluation allows: %v", name, c.Op, c.Key, err, want.Allow)
						case err != nil && (!errors.As(err, &de) || !reflect.DeepEqual(de.Violations, want.Deny)):
							t.Errorf("%s %s %q: %v, full evaluation refuses by %v", name, c.Op, c.Key, err, want.Deny)
						}
					}
				})
			}
		}
		wg.Wait()
	}
}

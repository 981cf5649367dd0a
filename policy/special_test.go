package policy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
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
	return map[string]*Authorizer{
		"job":              NewAuthorizer(e, Principal{ID: "svc-q1", Kind: KindJob}, root, facts, nil, WithWriterSession()),
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
		"team/q2/offsets/1", "team/q1/offsets/5", "team/q1/state/0/0/2.delta", "tmp/x.odd", "../escape", ""}
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
// decision equals the full one.
func FuzzSpecialised(f *testing.F) {
	for _, c := range specialCalls() {
		f.Add(c.Key, c.Op == gateway.OpDelete, uint8(c.Cond.Kind), c.Size, c.Stream, uint8(0))
	}
	e := specialEngine(f, Options{})
	as := specialAuthorizers(e)
	names := []string{"job", "job-exists", "job-bucket", "retention", "retention-noplan", "housekeeping", "admin", "admin-reason", "unknown-kind", "no-root"}
	f.Fuzz(func(t *testing.T, key string, del bool, cond uint8, size int64, stream bool, who uint8) {
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
		checkSpecial(t, as[names[int(who)%len(names)]], c)
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

package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ckgate/ckgate/gateway"
)

// Authorizer decides every Put and Delete of a store through the policy
// engine. It implements gateway.Authorizer: wrap a store with
// gateway.WithAuthorizer(store, a).
type Authorizer struct {
	engine *Engine
	log    *DecisionLog
	p      Principal
	root   string
	base   string
	facts  Facts
	plan   *Plan
	known  []KnownQuery
	stat   func(ctx context.Context, key string) (bool, error)
	now    func() time.Time

	// constant parts of every input, built once
	principal, checkpoint, rootTerm, planTerm, knownTerm *ast.Term

	mu     sync.Mutex
	shapes map[callShape]*shapeState
}

// callShape is what the inputs of an Authorizer's calls share beyond its
// own constants: the calls of one shape differ in key, path and size only.
type callShape struct {
	op     gateway.Op
	cond   gateway.CondKind
	exists int8 // 0 unknown, 1 absent, 2 present
	stream bool
}

// shapeState counts a shape's calls and holds its specialisation.
type shapeState struct {
	calls int
	tried bool
	sp    *special
	err   error
}

// specialiseAfter is the number of calls of one shape evaluated in full
// before the shape is specialised (partial evaluation and a compile, some
// milliseconds): a command making a single call never pays for it.
const specialiseAfter = 2

// AuthorizerOption configures NewAuthorizer.
type AuthorizerOption func(*Authorizer)

// WithStoreURL says where the guarded store's keys live when the store is
// not opened at the checkpoint root (a bucket-level store): a key's path is
// JoinPath(url, key). The default is the root itself.
func WithStoreURL(url string) AuthorizerOption {
	return func(a *Authorizer) { a.base = strings.TrimSuffix(url, "/") }
}

// WithPlan supplies the retention plan a retention principal deletes by.
func WithPlan(p *Plan) AuthorizerOption { return func(a *Authorizer) { a.plan = p } }

// WithKnownQueries adds other queries' roots to the ones in data.
func WithKnownQueries(qs []KnownQuery) AuthorizerOption {
	return func(a *Authorizer) { a.known = qs }
}

// WithExists lets the authorizer tell an overwrite from a create for an
// unconditional Put of a log entry, by asking whether the key exists (one
// Stat, only for such puts). Without it such a put counts as an overwrite.
func WithExists(s gateway.Store) AuthorizerOption {
	return func(a *Authorizer) {
		a.stat = func(ctx context.Context, key string) (bool, error) {
			_, err := s.Stat(ctx, key)
			switch {
			case err == nil:
				return true, nil
			case errors.Is(err, gateway.ErrNotFound):
				return false, nil
			}
			return false, err
		}
	}
}

// NewAuthorizer returns the Authorizer for principal p writing the
// checkpoint rooted at root (its location, e.g. "s3://bucket/team/q1"),
// with what is known about that checkpoint, logging every decision to log
// (nil: none).
func NewAuthorizer(e *Engine, p Principal, root string, facts Facts, log *DecisionLog, opts ...AuthorizerOption) *Authorizer {
	a := &Authorizer{engine: e, log: log, p: p, root: strings.TrimSuffix(root, "/"), facts: facts, now: time.Now}
	a.base = a.root
	for _, o := range opts {
		o(a)
	}
	a.principal = p.term()
	a.checkpoint = facts.term()
	a.rootTerm = str(a.root)
	if a.plan != nil {
		a.planTerm = a.plan.term()
	}
	if len(a.known) > 0 {
		a.knownTerm = knownTerm(a.known)
	}
	return a
}

var _ gateway.Authorizer = (*Authorizer)(nil)

// Authorize asks the policy about c. A refusal is a *DeniedError naming
// the rules; so is a policy that could not be evaluated (fail closed).
func (a *Authorizer) Authorize(ctx context.Context, c gateway.Call) error {
	start := a.now()
	path := JoinPath(a.base, c.Key)
	in, shape := a.input(ctx, c, path)
	var d Decision
	if sp := a.special(ctx, shape, in); sp != nil && a.engine.allows(ctx, sp, in) {
		d = sp.allow
	} else {
		d = a.engine.decide(ctx, in)
	}
	_, err := a.finish(d, string(c.Op), c.Key, path, start)
	return err
}

// special returns the specialisation of shape, building it on the shape's
// specialiseAfter-th call; nil while there is none (the call is evaluated
// in full).
func (a *Authorizer) special(ctx context.Context, shape callShape, in ast.Object) *special {
	a.mu.Lock()
	st := a.shapes[shape]
	if st == nil {
		if a.shapes == nil {
			a.shapes = map[callShape]*shapeState{}
		}
		st = &shapeState{}
		a.shapes[shape] = st
	}
	st.calls++
	if st.tried || st.calls < specialiseAfter {
		sp := st.sp
		a.mu.Unlock()
		return sp
	}
	st.tried = true // one build; concurrent calls evaluate in full meanwhile
	a.mu.Unlock()
	known, err := knownPart(in)
	var sp *special
	if err == nil {
		sp, err = a.engine.specialise(ctx, known)
	}
	a.mu.Lock()
	st.sp, st.err = sp, err
	a.mu.Unlock()
	return sp
}

// knownPart is the part of in that the calls of its shape share. Every
// field of in must be either shared (knownFilter) or one of
// specialUnknowns: a field partial evaluation knew of neither would be
// taken as absent.
func knownPart(in ast.Object) (ast.Object, error) {
	known, err := in.Filter(knownFilter)
	if err != nil {
		return nil, err
	}
	var stray error
	in.Foreach(func(k, _ *ast.Term) {
		if knownFilter.Get(k) == nil && !slices.Contains(specialUnknownKeys, k.Value) {
			stray = fmt.Errorf("%w: input field %v is neither shared nor unknown", errNotSpecialisable, k)
		}
	})
	return known, stray
}

// knownFilter keeps the fields of an input that one call shape of an
// Authorizer shares (everything but specialUnknowns).
var knownFilter = ast.NewObject(
	item("action", ast.NullTerm()), item("root", ast.NullTerm()), item("cond", ast.NullTerm()),
	item("exists", ast.NullTerm()), item("stream", ast.NullTerm()), item("principal", ast.NullTerm()),
	item("checkpoint", ast.NullTerm()), item("known_queries", ast.NullTerm()),
)

func (a *Authorizer) input(ctx context.Context, c gateway.Call, path string) (ast.Object, callShape) {
	shape := callShape{op: c.Op, cond: c.Cond.Kind, stream: c.Stream}
	items := make([][2]*ast.Term, 0, 12)
	action, ok := actionTerms[c.Op]
	if !ok {
		action = str(string(c.Op))
	}
	cond, ok := condTerms[c.Cond.Kind]
	if !ok {
		cond = str(condName(c.Cond))
	}
	items = append(items,
		item("action", action),
		item("key", str(c.Key)),
		item("path", str(path)),
		item("root", a.rootTerm),
		item("cond", cond),
		item("principal", a.principal),
		item("checkpoint", a.checkpoint),
	)
	if c.Op == gateway.OpPut {
		items = append(items, item("size", ast.IntNumberTerm(int(c.Size))), item("stream", boolTerm(c.Stream)))
		if a.stat != nil && c.Cond.Kind == gateway.CondNone && looksLikeLogEntry(path) {
			if exists, err := a.stat(ctx, c.Key); err == nil {
				items = append(items, item("exists", boolTerm(exists)))
				shape.exists = 1
				if exists {
					shape.exists = 2
				}
			} // unknown: the policy treats the put as an overwrite
		}
	}
	if a.planTerm != nil {
		items = append(items, item("plan", a.planTerm))
	}
	if a.knownTerm != nil {
		items = append(items, item("known_queries", a.knownTerm))
	}
	return ast.NewObject(items...), shape
}

// looksLikeLogEntry is a cheap superset of the policy's log-entry test,
// deciding only whether a Stat is worth its request.
func looksLikeLogEntry(path string) bool {
	i := strings.LastIndexByte(path, '/')
	if i < 0 || i == len(path)-1 {
		return false
	}
	name, dir := path[i+1:], path[:i]
	if name[0] < '0' || name[0] > '9' {
		return false
	}
	dir = dir[strings.LastIndexByte(dir, '/')+1:]
	return dir == "offsets" || dir == "commits" || dir == "_spark_metadata"
}

// finish logs d and turns a refusal into a *DeniedError. A break glass
// that cannot be recorded in the decision log is refused.
func (a *Authorizer) finish(d Decision, action, key, path string, start time.Time) (Decision, error) {
	if a.log == nil && d.Allow && !d.BreakGlass {
		return d, nil
	}
	rec := DecisionRecord{
		DecisionID: gateway.NewWriteID(),
		Time:       start,
		Principal:  Principal{ID: a.p.ID, Kind: a.p.Kind},
		Action:     action,
		Key:        key,
		Path:       path,
		Root:       a.root,
		QueryID:    a.facts.QueryID,
		Rules:      d.Rules(),
		BreakGlass: d.BreakGlass,
		Reason:     d.Reason,
		ElapsedUs:  a.now().Sub(start).Microseconds(),
	}
	if d.Err != nil {
		rec.Error = d.Err.Error()
	}
	vs := d.Deny
	if d.BreakGlass {
		vs = d.Overridden
	}
	for _, v := range vs {
		rec.Messages = append(rec.Messages, v.ID+": "+v.Msg)
	}
	if d.Allow && d.BreakGlass && a.log == nil {
		d = Decision{Deny: []Violation{{ID: RuleFailClosed, Name: "fail-closed", Severity: "deny",
			Msg: fmt.Sprintf("break glass by %s (overriding %s) needs a decision log to record it", a.p.ID, strings.Join(d.Rules(), ", "))}}}
	}
	rec.Result = "deny"
	if d.Allow {
		rec.Result = "allow"
	}
	if err := a.log.Record(rec); err != nil && d.Allow && d.BreakGlass {
		d = Decision{Err: err, Deny: []Violation{{ID: RuleFailClosed, Name: "fail-closed", Severity: "deny",
			Msg: "break glass could not be recorded in the decision log: " + err.Error()}}}
	}
	if d.Allow {
		return d, nil
	}
	return d, &DeniedError{Action: action, Path: path, DecisionID: rec.DecisionID, Violations: d.Deny, Err: d.Err}
}

// Evaluate decides in, records the decision in log (nil: none) and returns
// it, with a *DeniedError when refused. An admin's break glass needs the
// log, as it does through an Authorizer.
func Evaluate(ctx context.Context, e *Engine, in Input, log *DecisionLog) (Decision, error) {
	start := time.Now()
	d := e.Decide(ctx, in)
	a := &Authorizer{log: log, p: in.Principal, root: in.Root, facts: in.Checkpoint, now: time.Now}
	path := in.Path
	if path == "" {
		path = in.Root
	}
	return a.finish(d, in.Action, in.Key, path, start)
}

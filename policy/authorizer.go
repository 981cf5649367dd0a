package policy

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ckgate/ckgate/gateway"
)

// Authorizer decides every Put and Delete of a store through the policy
// engine. It implements gateway.Authorizer: wrap a store with
// gateway.WithAuthorizer(store, a); Guard builds both for a command.
//
// Every decision is made on the canonical location of the object the
// write touches (gateway.CanonicalKey) and the checkpoint roots above it
// (a RootFinder), never on how the caller spelled them; and the condition
// the decision relied on is the condition of the write.
type Authorizer struct {
	engine  *Engine
	log     *DecisionLog
	p       Principal
	scope   string // where the principal writes: its checkpoint root or sink (canonical)
	base    string // the guarded store's root (canonical): keys are below it
	facts   Facts
	plan    *Plan
	known   []KnownQuery
	session bool
	roots   *RootFinder
	stat    func(ctx context.Context, key string) (gateway.Attrs, error)
	list    func(ctx context.Context, prefix string) iter.Seq2[gateway.Attrs, error]
	raw     gateway.Store // the store under the guard (WithExists), for root owner records
	owners  bool          // WithRootOwners
	dryRun  bool          // WithDryRun
	now     func() time.Time
	warn    func(Warning)

	// constant parts of every input, built once
	principal, checkpoint, scopeTerm, planTerm, knownTerm *ast.Term

	mu        sync.Mutex
	shapes    map[callShape]*shapeState
	rootCache map[string][2]*ast.Term
	heads     map[string]purgeHeads // the log heads seen, for input.purge
}

// callShape is what the inputs of an Authorizer's calls share beyond its
// own constants: the calls of one shape differ in key, location and size
// only.
type callShape struct {
	op     gateway.Op
	cond   gateway.CondKind
	exists int8 // 0 unknown, 1 absent, 2 present
	stream bool
	roots  string // the roots above the location, NUL-separated
	owner  string // the owner of the innermost root (WithRootOwners)
}

// shapeState counts a shape's calls and holds its specialisation.
type shapeState struct {
	calls int
	tried bool
	sp    *special
	err   error
	roots *ast.Term
	root  *ast.Term
}

// specialiseAfter is the number of calls of one shape evaluated in full
// before the shape is specialised (partial evaluation and a compile, some
// milliseconds): a command making a single call never pays for it.
const specialiseAfter = 2

// AuthorizerOption configures NewAuthorizer.
type AuthorizerOption func(*Authorizer)

// WithStoreURL says where the guarded store's keys live (a canonical
// location) when the store is not opened at the scope: a key's location is
// gateway.CanonicalKey(url, key). The default is the scope itself.
func WithStoreURL(url string) AuthorizerOption {
	return func(a *Authorizer) { a.base = trimLocation(url) }
}

// WithPlan supplies the retention plan a retention principal deletes by.
func WithPlan(p *Plan) AuthorizerOption { return func(a *Authorizer) { a.plan = p } }

// WithKnownQueries adds other queries' roots to the ones in data.
func WithKnownQueries(qs []KnownQuery) AuthorizerOption {
	return func(a *Authorizer) { a.known = qs }
}

// WithRoots makes f find the checkpoint roots above every location.
// Without it the scope is the one root.
func WithRoots(f *RootFinder) AuthorizerOption { return func(a *Authorizer) { a.roots = f } }

// WithWriterSession says the writes come through the writer session of the
// query that owns the scope (input.writer_session): the only way, besides
// an archive copier and an admin breaking glass, to create log entries.
func WithWriterSession() AuthorizerOption { return func(a *Authorizer) { a.session = true } }

// WithExists lets the authorizer tell an overwrite from a create for an
// unconditional Put of a log entry, by asking s for the key (one Stat,
// only for such puts). The write then carries what it saw: IfAbsent, or
// IfMatch of the version. Without it such a put counts as an overwrite.
// It also lets a delete of a log entry be decided on where the entry
// stands in its log (input.purge, one listing of the log's head); without
// it such a delete carries no facts and the default policy refuses it.
func WithExists(s gateway.Store) AuthorizerOption {
	return func(a *Authorizer) { a.stat, a.list, a.raw = s.Stat, s.List, s }
}

// WithDryRun decides and logs every call without enforcing it: a refusal
// is recorded in the decision log (result "deny", dry_run true) and the
// write goes ahead, with the condition the decision relied on. It needs a
// decision log: NewAuthorizer's log must not be nil (Guard checks).
func WithDryRun() AuthorizerOption { return func(a *Authorizer) { a.dryRun = true } }

// WithWarn calls f with the warnings of every allowed decision that has
// some (rules of severity warn: a conftest-style `warn`, a violation of
// severity warn), after they are in the decision log.
func WithWarn(f func(Warning)) AuthorizerOption { return func(a *Authorizer) { a.warn = f } }

// NewAuthorizer returns the Authorizer for principal p writing below
// scope (a canonical location, e.g. "s3://bucket/team/q1"), with what is
// known about that checkpoint, logging every decision to log (nil: none).
func NewAuthorizer(e *Engine, p Principal, scope string, facts Facts, log *DecisionLog, opts ...AuthorizerOption) *Authorizer {
	a := &Authorizer{engine: e, log: log, p: p, scope: trimLocation(scope), facts: facts, now: time.Now}
	a.base = a.scope
	for _, o := range opts {
		o(a)
	}
	a.principal = p.term()
	a.checkpoint = facts.term()
	a.scopeTerm = str(a.scope)
	if a.plan != nil {
		a.planTerm = a.plan.term()
	}
	if len(a.known) > 0 {
		a.knownTerm = knownTerm(a.known)
	}
	return a
}

var _ gateway.Authorizer = (*Authorizer)(nil)

// Authorize asks the policy about c and returns the condition its write
// must carry. A refusal is a *DeniedError naming the rules; so is a policy
// that could not be evaluated, and a location or root that could not be
// established (fail closed).
func (a *Authorizer) Authorize(ctx context.Context, c gateway.Call) (gateway.Cond, error) {
	start := a.now()
	loc, roots, err := a.locate(ctx, c.Key)
	if errors.Is(err, gateway.ErrInvalidKey) {
		return gateway.Cond{}, err // the store refuses such a key anyway: nothing to decide
	}
	if err != nil {
		_, err = a.finish(failClosed(err), string(c.Op), c.Key, JoinPath(a.base, c.Key), a.scope, start)
		return c.Cond, err // a dry run lets it through as asked
	}
	cond, in, shape, err := a.gather(ctx, c, loc, roots)
	if err != nil {
		_, err = a.finish(failClosed(err), string(c.Op), c.Key, loc, a.scope, start)
		return cond, err // a dry run lets it through as asked
	}
	var d Decision
	if sp := a.special(ctx, shape, in); sp != nil && a.engine.allows(ctx, sp, in) {
		d = sp.allow
	} else {
		d = a.engine.decide(ctx, in)
	}
	inner := a.scope
	if len(roots) > 0 {
		inner = roots[len(roots)-1]
	}
	if _, err := a.finish(d, string(c.Op), c.Key, loc, inner, start); err != nil {
		return cond, err
	}
	if a.roots != nil && c.Op == gateway.OpPut {
		a.roots.Wrote(loc)
	}
	return cond, nil
}

// gather establishes the facts the policy decides c at loc on (whether
// the object exists, what a delete would purge, the root's owner and
// process) and returns the policy input built from them, with the
// condition c's write must carry. An error is a root fact that could not
// be established; cond is set then too.
func (a *Authorizer) gather(ctx context.Context, c gateway.Call, loc string, roots []string) (cond gateway.Cond, in ast.Object, shape callShape, err error) {
	cond, exists := a.observe(ctx, c, loc, roots)
	var purge *PurgeFacts
	if c.Op == gateway.OpDelete {
		purge = a.purgeFacts(ctx, loc, roots)
	}
	owner, process, err := a.rootFacts(ctx, c, loc, roots)
	if err != nil {
		return cond, nil, shape, err
	}
	in, shape = a.input(c, loc, roots, exists, purge, owner, process)
	return cond, in, shape, nil
}

var trueVal, falseVal = true, false

// trimLocation drops a trailing '/' from a location, but for the local
// disk's root "file:///".
func trimLocation(loc string) string {
	if loc == "file:///" {
		return loc
	}
	return strings.TrimSuffix(loc, "/")
}

// observe looks at what an unconditional put of a log entry would replace
// and returns the condition that holds what it saw: IfAbsent for an absent
// key, IfMatch of the version for a present one (exists says which; nil
// when not looked at or unknown, which the policy counts as an overwrite).
func (a *Authorizer) observe(ctx context.Context, c gateway.Call, loc string, roots []string) (gateway.Cond, *bool) {
	if c.Op != gateway.OpPut || c.Cond.Kind != gateway.CondNone || a.stat == nil || !isLogEntry(loc, roots) {
		return c.Cond, nil
	}
	attrs, err := a.stat(ctx, c.Key)
	switch {
	case err == nil:
		return gateway.IfMatch(attrs.Version), &trueVal
	case errors.Is(err, gateway.ErrNotFound):
		return gateway.IfAbsent(), &falseVal
	}
	return c.Cond, nil
}

// locate returns the canonical location of key and the checkpoint roots
// above it, outermost first.
func (a *Authorizer) locate(ctx context.Context, key string) (string, []string, error) {
	loc, err := gateway.CanonicalKey(a.base, key)
	if err != nil {
		return "", nil, err
	}
	if a.roots == nil {
		if a.scope != "" && gateway.InsideLocation(loc, a.scope) {
			return loc, []string{a.scope}, nil
		}
		return loc, nil, nil
	}
	roots, err := a.roots.Above(ctx, loc)
	return loc, roots, err
}

// isLogEntry is the Go side of the policy's log-entry test (a superset),
// deciding only whether a Stat is worth its request: offsets/N, commits/N,
// metadata and sources/S/N of a root, and a sink's _spark_metadata/N.
func isLogEntry(loc string, roots []string) bool {
	dir, name := splitLocation(loc)
	_, parent := splitLocation(dir)
	if parent == "_spark_metadata" && gateway.AllDigits(strings.TrimSuffix(name, ".compact")) {
		return true
	}
	for _, r := range roots {
		rel, ok := strings.CutPrefix(loc, strings.TrimSuffix(r, "/")+"/")
		if !ok {
			continue
		}
		if rel == "metadata" || logEntryRel(rel) {
			return true
		}
	}
	return false
}

// logEntryRel reports whether rel (relative to a root) is offsets/N,
// commits/N or sources/S/N(.compact).
func logEntryRel(rel string) bool {
	dir, name, ok := strings.Cut(rel, "/")
	if !ok {
		return false
	}
	switch dir {
	case "offsets", "commits":
		return gateway.AllDigits(name)
	case "sources":
		_, n, ok := strings.Cut(name, "/")
		return ok && !strings.Contains(n, "/") && gateway.AllDigits(strings.TrimSuffix(n, ".compact"))
	}
	return false
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
	item("action", ast.NullTerm()), item("root", ast.NullTerm()), item("roots", ast.NullTerm()),
	item("scope", ast.NullTerm()), item("cond", ast.NullTerm()), item("exists", ast.NullTerm()),
	item("stream", ast.NullTerm()), item("principal", ast.NullTerm()), item("checkpoint", ast.NullTerm()),
	item("known_queries", ast.NullTerm()), item("writer_session", ast.NullTerm()), item("root_owner", ast.NullTerm()),
)

func (a *Authorizer) input(c gateway.Call, loc string, roots []string, exists *bool, purge *PurgeFacts, owner string, process *ProcessFacts) (ast.Object, callShape) {
	shape := callShape{op: c.Op, cond: c.Cond.Kind, stream: c.Stream, roots: strings.Join(roots, "\x00")}
	items := make([][2]*ast.Term, 0, 16)
	action, ok := actionTerms[c.Op]
	if !ok {
		action = str(string(c.Op))
	}
	cond, ok := condTerms[c.Cond.Kind]
	if !ok {
		cond = str(condName(c.Cond))
	}
	rootsTerm, rootTerm := a.rootTerms(shape.roots, roots)
	locTerm := str(loc)
	items = append(items,
		item("action", action),
		item("key", str(c.Key)),
		item("path", locTerm),
		item("location", locTerm),
		item("root", rootTerm),
		item("roots", rootsTerm),
		item("scope", a.scopeTerm),
		item("cond", cond),
		item("principal", a.principal),
		item("checkpoint", a.checkpoint),
	)
	if a.session {
		items = append(items, item("writer_session", trueTerm))
	}
	if c.Op == gateway.OpPut {
		items = append(items, item("size", ast.IntNumberTerm(int(c.Size))), item("stream", boolTerm(c.Stream)))
		if exists != nil {
			items = append(items, item("exists", boolTerm(*exists)))
			shape.exists = 1
			if *exists {
				shape.exists = 2
			}
		}
	}
	if purge != nil {
		items = append(items, item("purge", purge.term()))
	}
	if owner != "" {
		items = append(items, item("root_owner", str(owner)))
		shape.owner = owner
	}
	if process != nil {
		items = append(items, item("process", process.term()))
	}
	if a.planTerm != nil {
		items = append(items, item("plan", a.planTerm))
	}
	if a.knownTerm != nil {
		items = append(items, item("known_queries", a.knownTerm))
	}
	return ast.NewObject(items...), shape
}

// rootTerms returns the input's roots array and innermost root for a list
// of roots, built once per distinct list.
func (a *Authorizer) rootTerms(k string, roots []string) (*ast.Term, *ast.Term) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rootCache == nil {
		a.rootCache = map[string][2]*ast.Term{}
	}
	if t, ok := a.rootCache[k]; ok {
		return t[0], t[1]
	}
	arr := make([]*ast.Term, len(roots))
	for i, r := range roots {
		arr[i] = str(r)
	}
	inner := str("")
	if len(roots) > 0 {
		inner = arr[len(arr)-1]
	}
	t := [2]*ast.Term{ast.ArrayTerm(arr...), inner}
	if len(a.rootCache) < 1024 {
		a.rootCache[k] = t
	}
	return t[0], t[1]
}

// finish logs d and turns a refusal into a *DeniedError. A break glass
// that cannot be recorded in the decision log is refused.
func (a *Authorizer) finish(d Decision, action, key, path, root string, start time.Time) (Decision, error) {
	if a.log == nil && d.Allow && !d.BreakGlass {
		a.warned(d, action, key, path)
		return d, nil
	}
	rec := DecisionRecord{
		DecisionID: gateway.NewWriteID(),
		Time:       start,
		Principal:  Principal{ID: a.p.ID, Kind: a.p.Kind},
		Action:     action,
		Key:        key,
		Path:       path,
		Root:       root,
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
	for _, v := range d.Warn {
		rec.Warnings = append(rec.Warnings, v.ID+": "+v.Msg)
	}
	if d.Allow && d.BreakGlass && a.log == nil {
		d = Decision{Deny: []Violation{{ID: RuleFailClosed, Name: "fail-closed", Severity: "deny",
			Msg: fmt.Sprintf("break glass by %s (overriding %s) needs a decision log to record it", a.p.ID, strings.Join(d.Rules(), ", "))}}}
	}
	rec.Result = "deny"
	if d.Allow {
		rec.Result = "allow"
	}
	rec.DryRun = a.dryRun
	logErr := a.log.Record(rec)
	if logErr != nil && d.Allow && d.BreakGlass {
		d = Decision{Err: logErr, Deny: []Violation{{ID: RuleFailClosed, Name: "fail-closed", Severity: "deny",
			Msg: "break glass could not be recorded in the decision log: " + logErr.Error()}}}
	}
	if d.Allow {
		a.warned(d, action, key, path)
		return d, nil
	}
	if a.dryRun && a.log != nil && logErr == nil {
		return d, nil // recorded as a deny, let through
	}
	return d, &DeniedError{Action: action, Path: path, DecisionID: rec.DecisionID, Violations: d.Deny, Err: d.Err}
}

// warned reports an allowed decision's warnings.
func (a *Authorizer) warned(d Decision, action, key, path string) {
	if a.warn != nil && len(d.Warn) > 0 {
		a.warn(Warning{Action: action, Key: key, Path: path, Violations: d.Warn})
	}
}

// Evaluate decides in, records the decision in log (nil: none) and returns
// it, with a *DeniedError when refused. An admin's break glass needs the
// log, as it does through an Authorizer.
func Evaluate(ctx context.Context, e *Engine, in Input, log *DecisionLog) (Decision, error) {
	start := time.Now()
	d := e.Decide(ctx, in)
	a := &Authorizer{log: log, p: in.Principal, scope: in.Root, facts: in.Checkpoint, now: time.Now}
	path := in.Path
	if path == "" {
		path = in.Root
	}
	return a.finish(d, in.Action, in.Key, path, in.Root, start)
}

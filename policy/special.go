package policy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/types"
)

// An Authorizer asks the same decision over and over with inputs that
// differ only in the key, its path, the size and the retention plan: the
// principal, the root, the checkpoint facts, the action and the condition
// repeat. OPA's partial evaluation specialises the policy for the parts
// that repeat, once per call shape, so that each call evaluates only what
// depends on the key: for a job's create-only put, one startswith.
//
// The specialisation keeps the policy's answer whole:
//   - the residual is the violation set (data.ckgate.gateway.violations,
//     denials and warnings alike, so a call with a warning is decided in
//     full and its warnings reported), evaluated per call with the full
//     input against the policy's own rules and the support rules partial
//     evaluation wrote;
//   - the decision itself is specialised only when, for the known part of
//     the input, it depends on nothing but the violation set: its residual
//     then names no input field and no document other than the violations.
//     Its answer on no violations is evaluated once (the policy's own
//     decision, with the violation set empty) and returned while the
//     violation set stays empty;
//   - any violation, error, undefined or unexpected result sends the call
//     to the full evaluation, which decides it as it always did.
//
// # Equal to the full evaluation, errors included
//
// Partial evaluation is exact only for evaluations that succeed: the
// residual gives the results the full evaluation gives, but an error the
// full evaluation would raise may be lost. A complete rule with two values
// for an input (eval_conflict_error) is inlined as two alternatives; a
// builtin that fails on an unknown argument is dropped when a later
// expression of its body, or the rule that reads it (a warning filtered
// out of the violation set), fails on known values. The full evaluation
// denies such an input (an error fails closed); the residual would allow
// it. Undefined needs no such care: a decision that is undefined, or
// anything but the precomputed one, for some inputs of the shape depends
// on more than the violation set, which the decision's residual shows.
//
// So a shape is specialised only when no evaluation of the decision on an
// input of that shape can fail (provablyEqual). Then the full evaluation
// of every call of the shape succeeds, and partial evaluation's exactness
// on evaluations that succeed is all the specialisation needs: the
// residual's violation set is the full evaluation's, and a call with none
// gets the full evaluation's decision. What can fail in Rego (with strict
// builtin errors, as the engine evaluates) is a builtin call, a conflict
// between values of one complete rule, function or object key, and what
// `with` and `every` evaluate; references, unification, negation and
// comprehensions other than object ones by themselves cannot, but for a
// reference that merges base documents with rules' values (no data file
// may set a document a rule defines, or one above it: dataOverlapsRules). Every rule the decision can reach
// (the rule tree's over-approximation of every reference, dynamic ones
// included, followed to the end) must therefore be
//   - one of the embedded default rules (engine.go: the modules loaded from
//     rego/, not replaced by a user module of the same name), which are
//     written not to fail on any input an Authorizer builds, and which the
//     differential tests and FuzzSpecialised compare with the full
//     evaluation. Their calls on known values (the input the shape shares,
//     data from --data) are evaluated by the partial evaluation itself: a
//     failure there leaves the shape unspecialised; or
//   - a rule of the fragment in which nothing fails: a multi-value rule
//     (`contains`), or a complete rule or function every definition of
//     which (user and default alike) has one and the same constant value
//     (a default value aside), so that no two definitions, and no two
//     solutions of one body, can disagree; no partial object rule, no
//     `else`, `with` or `every`; every builtin called one that cannot fail
//     for the kinds of value its arguments have (totalBuiltins:
//     comparisons, membership, string functions on strings, arithmetic
//     other than division on numbers, count on collections, sprintf on a
//     string and an array, regex.match with a constant valid pattern, ...).
//     The kinds come from the input the shape shares (its values are
//     known), from specialInputs for the fields that vary (an Authorizer
//     gives each one kind of value), from the compiler's type environment
//     for data and rules, and from what the body bound before; anything
//     else is of any kind, and a builtin that could fail on it disqualifies
//     the shape. A function called from such a rule is checked the same way
//     for the kinds of its arguments, default functions included, and a
//     user's definition of a function a default rule calls for arguments
//     of any kind.
//
// Anything outside this (a user's `with`, `else`, helper rule computing a
// value, to_number, division, a builtin on a value of unknown kind) is
// decided in full, as before specialisation. Base documents in data are
// constants: the engine's store is written once, in New.
//
// Partial evaluation leaves nondeterministic builtins (time, http.send)
// in the residual, so they run on every call as before.

// dataOverlapsRules returns an errNotSpecialisable when data sets a
// document at the path of a rule, or a non-object document above one: a
// reference reaching there merges the two, which may fail.
func dataOverlapsRules(data map[string]any, node *ast.TreeNode, path ast.Ref) error {
	for _, k := range slices.Sorted(maps.Keys(data)) {
		child := node.Child(ast.String(k))
		if child == nil {
			continue
		}
		p := path.Append(ast.StringTerm(k))
		m, ok := data[k].(map[string]any)
		if len(child.Values) > 0 || !ok {
			return fmt.Errorf("%w: data sets %v, where a rule is defined", errNotSpecialisable, p)
		}
		if err := dataOverlapsRules(m, child, p); err != nil {
			return err
		}
	}
	return nil
}

// specialInputs are the input fields that vary between the calls of one
// shape: partial evaluation takes them as unknown. Each comes with the
// kind of value an Authorizer's input gives it whenever it is present
// (TestSpecialInputsKinds checks that). An input field that is neither one
// of these nor shared by the shape (knownFilter) disables specialisation.
var specialInputs = []struct {
	key  string
	kind valueKind
}{
	{"key", kindString},
	{"path", kindString},
	{"location", kindString},
	{"size", kindNumber},
	{"plan", kindObject},
	{"purge", kindObject},
	{"process", kindObject},
}

// specialUnknowns are specialInputs as references, specialUnknownKeys as
// input keys.
var specialUnknowns, specialUnknownKeys = func() ([]string, []ast.Value) {
	var refs []string
	var keys []ast.Value
	for _, f := range specialInputs {
		refs = append(refs, "input."+f.key)
		keys = append(keys, ast.String(f.key))
	}
	return refs, keys
}()

const (
	violationsQuery  = "data.ckgate.gateway.violations"
	specialNamespace = "ckgate_special"
)

// errNotSpecialisable: the policy's decision depends on more than its
// violation set for this shape, or partial evaluation gave an answer of a
// form the specialisation does not use.
var errNotSpecialisable = errors.New("policy: decision not specialisable")

var (
	auditPackage      = ast.MustParseRef("data.ckgate.audit")
	specialResult     = ast.Var("__ckgate_special__")
	specialViolations = ast.MustParseRef("data." + specialNamespace + ".ckgate.gateway.violations")
	violationsRef     = ast.MustParseRef(violationsQuery)
)

// special is the gateway decision specialised for the known part of an
// input.
type special struct {
	compiler *ast.Compiler
	query    ast.Body // binds specialResult to the violation set
	allow    Decision // the policy's decision when the violation set is empty
}

// specialise partially evaluates the gateway decision for known, the part
// of the input its calls share.
func (e *Engine) specialise(ctx context.Context, known ast.Object) (*special, error) {
	if err := e.provablyEqual(known); err != nil {
		return nil, err
	}
	dec, err := e.partial(ctx, gatewayQuery, known)
	if err != nil {
		return nil, err
	}
	if err := onlyViolations(dec); err != nil {
		return nil, err
	}
	viol, err := e.partial(ctx, violationsQuery, known)
	if err != nil {
		return nil, err
	}
	if len(viol.Queries) != 1 {
		return nil, fmt.Errorf("%w: %d residual queries for the violations", errNotSpecialisable, len(viol.Queries))
	}
	// The audit's rules are no part of a gateway decision: leaving them out
	// halves the compile. (Were a user's gateway rule to read them, the
	// compile fails and the shape is decided in full, as without it.)
	modules := maps.Clone(e.modules)
	maps.DeleteFunc(modules, func(_ string, m *ast.Module) bool { return m.Package.Path.HasPrefix(auditPackage) })
	for i, m := range viol.Support {
		modules[fmt.Sprintf("%s:%d", specialNamespace, i)] = m
	}
	c := ast.NewCompiler().WithEnablePrintStatements(false)
	c.Compile(modules)
	if c.Failed() {
		return nil, fmt.Errorf("policy: compile the specialised policy: %w", c.Errors)
	}
	query, err := c.QueryCompiler().Compile(viol.Queries[0])
	if err != nil {
		return nil, fmt.Errorf("policy: compile the specialised query: %w", err)
	}
	allow, err := e.decisionWithoutViolations(ctx, known)
	if err != nil {
		return nil, err
	}
	if !allow.Allow {
		return nil, fmt.Errorf("%w: the decision without violations does not allow", errNotSpecialisable)
	}
	return &special{compiler: c, query: query, allow: allow}, nil
}

// partial evaluates "specialResult = query" partially for known, with
// the fields of specialUnknowns unknown.
func (e *Engine) partial(ctx context.Context, query string, known ast.Object) (*rego.PartialQueries, error) {
	pq, err := rego.New(
		rego.Query(specialResult.String()+" = "+query),
		rego.Compiler(e.compiler),
		rego.Store(e.store),
		rego.ParsedInput(known),
		rego.Unknowns(specialUnknowns),
		rego.PartialNamespace(specialNamespace),
		rego.StrictBuiltinErrors(true),
	).Partial(ctx)
	if err != nil {
		return nil, fmt.Errorf("policy: partial evaluation of %s: %w", query, err)
	}
	return pq, nil
}

// onlyViolations checks that a residual decision depends on no input field
// and no document other than the violation set.
func onlyViolations(pq *rego.PartialQueries) error {
	if len(pq.Queries) != 1 {
		return fmt.Errorf("%w: %d residual queries for the decision", errNotSpecialisable, len(pq.Queries))
	}
	var bad ast.Ref
	check := func(r ast.Ref) bool {
		if bad != nil {
			return true
		}
		if r.HasPrefix(specialViolations) || r.HasPrefix(violationsRef) {
			// the violation set, evaluated on every call (or, in a
			// comprehension splitting it into denials and warnings,
			// left as the policy's own rule)
			return true
		}
		if r[0].Equal(ast.InputRootDocument) || r[0].Equal(ast.DefaultRootDocument) {
			bad = r
		}
		return false
	}
	ast.WalkRefs(pq.Queries[0], check)
	for _, m := range pq.Support {
		for _, r := range m.Rules {
			if m.Package.Path.Extend(r.Head.Ref()).Equal(specialViolations) {
				continue // the violations' own support rules
			}
			ast.WalkRefs(r, check)
		}
	}
	if bad != nil {
		return fmt.Errorf("%w: the decision depends on %v", errNotSpecialisable, bad)
	}
	return nil
}

// decisionWithoutViolations is the policy's decision for known with the
// violation set empty.
func (e *Engine) decisionWithoutViolations(ctx context.Context, known ast.Object) (Decision, error) {
	rs, err := rego.New(
		rego.Query(gatewayQuery+" with "+violationsQuery+" as set()"),
		rego.Compiler(e.compiler),
		rego.Store(e.store),
		rego.ParsedInput(known),
		rego.StrictBuiltinErrors(true),
		rego.GenerateJSON(rawTerm),
	).Eval(ctx)
	if err != nil {
		return Decision{}, fmt.Errorf("policy: the decision without violations: %w", err)
	}
	if len(rs) != 1 || len(rs[0].Expressions) == 0 {
		return Decision{}, fmt.Errorf("%w: the decision without violations is undefined", errNotSpecialisable)
	}
	t, ok := rs[0].Expressions[0].Value.(*ast.Term)
	if !ok {
		return Decision{}, fmt.Errorf("policy: the decision without violations is %T", rs[0].Expressions[0].Value)
	}
	return parseDecision(t.Value)
}

// allows evaluates the specialised violation set on input: true when it
// is empty, so that the decision is sp.allow. false sends the call to the
// full evaluation (violations, errors, anything unexpected).
func (e *Engine) allows(ctx context.Context, sp *special, input ast.Value) bool {
	if ctx.Err() != nil {
		return false
	}
	txn, err := e.store.NewTransaction(ctx)
	if err != nil {
		return false
	}
	defer e.store.Abort(ctx, txn)
	cancel := topdown.NewCancel()
	stop := context.AfterFunc(ctx, cancel.Cancel)
	defer stop()
	results := 0
	empty := false
	err = topdown.NewQuery(sp.query).
		WithCompiler(sp.compiler).
		WithStore(e.store).
		WithTransaction(txn).
		WithInput(ast.NewTerm(input)).
		WithStrictBuiltinErrors(true).
		WithCancel(cancel).
		WithMetrics(specialMetrics).
		WithVirtualCache(&lazyVirtualCache{}).
		Iter(ctx, func(qr topdown.QueryResult) error {
			results++
			if s, ok := qr[specialResult].Value.(ast.Set); ok && s.Len() == 0 {
				empty = true
			}
			return nil
		})
	return err == nil && results == 1 && empty
}

var specialMetrics = metrics.NoOp()

// lazyVirtualCache is the evaluator's cache of rule results, made only
// when a residual evaluates a rule other than the violation set: that one
// is read once per call, and caching it cost a fifth of a decision's
// allocations.
type lazyVirtualCache struct {
	depth int // frames pushed before the cache was made
	inner topdown.VirtualCache
}

func (c *lazyVirtualCache) Push() {
	if c.inner == nil {
		c.depth++
		return
	}
	c.inner.Push()
}

func (c *lazyVirtualCache) Pop() {
	if c.inner == nil {
		c.depth--
		return
	}
	c.inner.Pop()
}

func (c *lazyVirtualCache) Get(ref ast.Ref) (*ast.Term, bool) {
	if c.inner == nil {
		return nil, false
	}
	return c.inner.Get(ref)
}

func (c *lazyVirtualCache) Put(ref ast.Ref, value *ast.Term) {
	if c.inner == nil {
		if ref.Equal(specialViolations) {
			return
		}
		c.inner = topdown.NewVirtualCache()
		for range c.depth {
			c.inner.Push()
		}
	}
	c.inner.Put(ref, value)
}

func (c *lazyVirtualCache) Keys() []ast.Ref {
	if c.inner == nil {
		return nil
	}
	return c.inner.Keys()
}

// valueKind is what a check knows of the value of a term: nothing
// (kindAny) or the kind of JSON value it is whenever it is defined.
type valueKind uint8

const (
	kindAny valueKind = iota
	kindString
	kindNumber
	kindBoolean
	kindNull
	kindArray
	kindSet
	kindObject
)

// kindOfValue is the kind of a known value.
func kindOfValue(v ast.Value) valueKind {
	switch v.(type) {
	case ast.String:
		return kindString
	case ast.Number:
		return kindNumber
	case ast.Boolean:
		return kindBoolean
	case ast.Null:
		return kindNull
	case *ast.Array, *ast.ArrayComprehension:
		return kindArray
	case ast.Set, *ast.SetComprehension:
		return kindSet
	case ast.Object, *ast.ObjectComprehension:
		return kindObject
	}
	return kindAny
}

// kindOfType is the kind of the values of a type the compiler inferred.
func kindOfType(t types.Type) valueKind {
	switch t := t.(type) {
	case types.String:
		return kindString
	case types.Number:
		return kindNumber
	case types.Boolean:
		return kindBoolean
	case types.Null:
		return kindNull
	case *types.Array:
		return kindArray
	case *types.Set:
		return kindSet
	case *types.Object:
		return kindObject
	case types.Any:
		if len(t) > 0 {
			k := kindOfType(t[0])
			for _, u := range t[1:] {
				if kindOfType(u) != k {
					return kindAny
				}
			}
			return k
		}
	}
	return kindAny
}

// totalBuiltins are the builtins the equality check lets a user rule
// call, each with the condition on its arguments under which it cannot
// fail (OPA v1's topdown: they fail only on operands of another kind,
// and these never divide, parse or reach outside).
var totalBuiltins = map[string]func(args []*ast.Term, kinds []valueKind) bool{}

func init() {
	anyArgs := func([]*ast.Term, []valueKind) bool { return true }
	all := func(k valueKind) func([]*ast.Term, []valueKind) bool {
		return func(_ []*ast.Term, kinds []valueKind) bool {
			for _, x := range kinds {
				if x != k {
					return false
				}
			}
			return true
		}
	}
	for _, b := range []*ast.Builtin{ast.Equality, ast.Equal, ast.NotEqual, ast.LessThan, ast.LessThanEq, ast.GreaterThan,
		ast.GreaterThanEq, ast.Member, ast.MemberWithKey, ast.IsString, ast.IsNumber, ast.IsBoolean, ast.IsNull,
		ast.IsArray, ast.IsSet, ast.IsObject, ast.TypeNameBuiltin, ast.NowNanos} {
		totalBuiltins[b.Name] = anyArgs
	}
	for _, b := range []*ast.Builtin{ast.StartsWith, ast.EndsWith, ast.Contains, ast.Lower, ast.Upper, ast.Trim, ast.TrimLeft,
		ast.TrimRight, ast.TrimPrefix, ast.TrimSuffix, ast.TrimSpace, ast.Split, ast.Replace, ast.IndexOf} {
		totalBuiltins[b.Name] = all(kindString)
	}
	for _, b := range []*ast.Builtin{ast.Plus, ast.Minus, ast.Multiply, ast.Abs, ast.Round, ast.Ceil, ast.Floor} {
		totalBuiltins[b.Name] = all(kindNumber)
	}
	for _, b := range []*ast.Builtin{ast.And, ast.Or} {
		totalBuiltins[b.Name] = all(kindSet)
	}
	totalBuiltins[ast.Count.Name] = func(_ []*ast.Term, k []valueKind) bool {
		return k[0] == kindString || k[0] == kindArray || k[0] == kindSet || k[0] == kindObject
	}
	totalBuiltins[ast.Sprintf.Name] = func(_ []*ast.Term, k []valueKind) bool {
		return k[0] == kindString && k[1] == kindArray
	}
	// concat's second argument must hold strings only: expr tells that
	// from an array or set literal.
	totalBuiltins[ast.Concat.Name] = func(_ []*ast.Term, k []valueKind) bool {
		return k[0] == kindString && k[1] == kindArray
	}
	totalBuiltins[ast.ObjectGet.Name] = func(_ []*ast.Term, k []valueKind) bool { return k[0] == kindObject }
	totalBuiltins[ast.RegexMatch.Name] = func(args []*ast.Term, k []valueKind) bool {
		pattern, ok := args[0].Value.(ast.String)
		if !ok || k[1] != kindString {
			return false
		}
		_, err := regexp.Compile(string(pattern))
		return err == nil
	}
}

// equalityCheck walks the rules a decision can reach (provablyEqual).
type equalityCheck struct {
	e       *Engine
	known   ast.Object
	queue   []*ast.Rule
	reached map[*ast.Rule]bool
	groups  map[string]bool      // rule paths whose definitions were checked
	bodies  map[string]valueKind // function definitions checked for the kinds of their arguments: their results' kinds
}

// errFailing: a rule the decision reaches might fail, so partial
// evaluation might lose its error.
type errFailing struct {
	rule *ast.Rule
	why  string
}

func (e *errFailing) Error() string {
	loc := ""
	if e.rule.Location != nil {
		loc = fmt.Sprintf(" (%s:%d)", e.rule.Location.File, e.rule.Location.Row)
	}
	return fmt.Sprintf("%v: rule %v%s %s", errNotSpecialisable, e.rule.Ref(), loc, e.why)
}

func (e *errFailing) Unwrap() error { return errNotSpecialisable }

var allRules = ast.RulesOptions{IncludeHiddenModules: true}

// provablyEqual returns nil when no evaluation of the gateway decision on
// an input with the known part known can fail (see the comment at the top
// of this file), an errNotSpecialisable naming the rule otherwise.
func (e *Engine) provablyEqual(known ast.Object) error {
	if e.dataOverlap != nil {
		return e.dataOverlap
	}
	if e.onlyDefaults() {
		return nil // whatever the input
	}
	_, err := e.checkEquality(known)
	return err
}

// checkEquality runs the check for known, and tells whether the decision
// reaches any rule of a user's.
func (e *Engine) checkEquality(known ast.Object) (user bool, err error) {
	ck := &equalityCheck{e: e, known: known, reached: map[*ast.Rule]bool{}, groups: map[string]bool{}, bodies: map[string]valueKind{}}
	ck.reach(e.compiler.GetRulesDynamicWithOpts(ast.MustParseRef(gatewayQuery), allRules))
	for len(ck.queue) > 0 {
		r := ck.queue[len(ck.queue)-1]
		ck.queue = ck.queue[:len(ck.queue)-1]
		if !e.trusted[r.Module] {
			user = true
		}
		if err := ck.rule(r); err != nil {
			return true, err
		}
	}
	return user, nil
}

func (ck *equalityCheck) reach(rules []*ast.Rule) {
	for _, r := range rules {
		if !ck.reached[r] {
			ck.reached[r] = true
			ck.queue = append(ck.queue, r)
		}
	}
}

// rule checks r (a user rule) and reaches every rule r refers to.
func (ck *equalityCheck) rule(r *ast.Rule) error {
	for x := r; x != nil; x = x.Else {
		ast.WalkRefs(x, func(ref ast.Ref) bool {
			if ref[0].Equal(ast.DefaultRootDocument) {
				ck.reach(ck.e.compiler.GetRulesDynamicWithOpts(ref, allRules))
			}
			return false
		})
	}
	if ck.e.trusted[r.Module] {
		// A default rule calling a function a user defined too: the
		// user's definitions must not fail for any arguments.
		var err error
		ast.WalkExprs(r, func(x *ast.Expr) bool {
			if err == nil && x.IsCall() {
				if op := x.Operator(); op[0].Equal(ast.DefaultRootDocument) {
					err = ck.userCall(op, len(x.Operands()))
				}
			}
			return err != nil
		})
		return err
	}
	if err := ck.group(r); err != nil {
		return err
	}
	if len(r.Head.Args) > 0 {
		return nil // a function: checked where it is called, for its arguments
	}
	return ck.body(r, r.Body, map[ast.Var]valueKind{})
}

// userCall checks the user definitions of the function op, called with
// n operands, for arguments of any kind.
func (ck *equalityCheck) userCall(op ast.Ref, n int) error {
	for _, f := range ck.e.compiler.GetRulesDynamicWithOpts(op, allRules) {
		if ck.e.trusted[f.Module] {
			continue
		}
		if _, err := ck.call(f, make([]valueKind, n)); err != nil {
			return err
		}
	}
	return nil
}

// group checks that the definitions of r's rule cannot disagree.
func (ck *equalityCheck) group(r *ast.Rule) error {
	path := r.Ref()
	if ck.groups[path.String()] {
		return nil
	}
	ck.groups[path.String()] = true
	defs := ck.e.compiler.GetRules(path)
	slices.SortFunc(defs, func(a, b *ast.Rule) int { return a.Location.Compare(b.Location) })
	kind := r.Head.RuleKind()
	var value *ast.Term
	for _, d := range defs {
		switch {
		case kind == ast.SingleValue && !d.Head.Ref().IsGround():
			return &errFailing{r, "is a partial object rule: two values for one key conflict"}
		case !d.Ref().Equal(path):
			return &errFailing{r, fmt.Sprintf("overlaps rule %v", d.Ref())}
		case d.Head.RuleKind() != kind:
			return &errFailing{r, "has definitions of two kinds"}
		}
		if d.Else != nil {
			return &errFailing{r, "has an else branch"}
		}
		if kind == ast.MultiValue || d.Default {
			continue
		}
		if d.Head.Value == nil || !d.Head.Value.IsGround() {
			return &errFailing{r, "has a value computed by its body: two of them conflict"}
		}
		if value == nil {
			value = d.Head.Value
		} else if !value.Equal(d.Head.Value) {
			return &errFailing{r, fmt.Sprintf("has definitions with values %v and %v: they conflict", value, d.Head.Value)}
		}
	}
	return nil
}

// call checks every definition of function f for arguments of kinds
// (a default definition for its builtins only, a user's one in full) and
// returns the kind of its result.
func (ck *equalityCheck) call(f *ast.Rule, kinds []valueKind) (valueKind, error) {
	key := fmt.Sprintf("%p%v", f, kinds)
	if k, ok := ck.bodies[key]; ok {
		return k, nil
	}
	if !ck.e.trusted[f.Module] {
		if err := ck.group(f); err != nil {
			return kindAny, err
		}
	}
	result, first := kindAny, true
	for x := f; x != nil; x = x.Else {
		env := map[ast.Var]valueKind{}
		for i, a := range x.Head.Args {
			if v, ok := a.Value.(ast.Var); ok && i < len(kinds) {
				env[v] = kinds[i]
			}
		}
		if err := ck.body(f, x.Body, env); err != nil {
			return kindAny, err
		}
		k := kindBoolean // f(x) if ...
		if x.Head.Value != nil {
			k = ck.kind(x.Head.Value, env)
		}
		if first {
			result, first = k, false
		} else if k != result {
			result = kindAny
		}
	}
	ck.bodies[key] = result
	return result, nil
}

// body checks that no expression of body can fail, with env the kinds of
// the variables bound before it.
func (ck *equalityCheck) body(r *ast.Rule, body ast.Body, env map[ast.Var]valueKind) error {
	for _, x := range body {
		if len(x.With) > 0 {
			return &errFailing{r, "uses with"}
		}
		scope := env
		if x.Negated {
			scope = maps.Clone(env)
		}
		switch t := x.Terms.(type) {
		case *ast.Every:
			return &errFailing{r, "uses every"}
		case *ast.SomeDecl:
			for _, s := range t.Symbols {
				if call, ok := s.Value.(ast.Call); ok {
					if err := ck.expr(r, call, scope); err != nil {
						return err
					}
				}
			}
		case *ast.Term:
			if err := ck.closures(r, t, scope); err != nil {
				return err
			}
		case []*ast.Term:
			if err := ck.expr(r, t, scope); err != nil {
				return err
			}
		}
	}
	return nil
}

// closures checks the bodies of the comprehensions in t.
func (ck *equalityCheck) closures(r *ast.Rule, t *ast.Term, env map[ast.Var]valueKind) error {
	var err error
	ast.WalkClosures(t, func(x any) bool {
		if err != nil {
			return true
		}
		switch c := x.(type) {
		case *ast.ArrayComprehension:
			err = ck.body(r, c.Body, maps.Clone(env))
		case *ast.SetComprehension:
			err = ck.body(r, c.Body, maps.Clone(env))
		case *ast.ObjectComprehension:
			err = &errFailing{r, "has an object comprehension: two values for one key conflict"}
		case *ast.Every:
			err = &errFailing{r, "uses every"}
		}
		return true
	})
	return err
}

// expr checks one call, and records the kinds of the variables it binds.
func (ck *equalityCheck) expr(r *ast.Rule, terms []*ast.Term, env map[ast.Var]valueKind) error {
	for _, t := range terms[1:] {
		if err := ck.closures(r, t, env); err != nil {
			return err
		}
	}
	op, ok := terms[0].Value.(ast.Ref)
	if !ok {
		return &errFailing{r, fmt.Sprintf("calls %v", terms[0])}
	}
	args := terms[1:]
	kinds := make([]valueKind, len(args))
	for i, a := range args {
		kinds[i] = ck.kind(a, env)
	}
	if op[0].Equal(ast.DefaultRootDocument) {
		fs := ck.e.compiler.GetRulesDynamicWithOpts(op, allRules)
		if len(fs) == 0 {
			return &errFailing{r, fmt.Sprintf("calls %v, which is no function", op)}
		}
		n := len(fs[0].Head.Args)
		result := kindAny
		for i, f := range fs {
			if len(f.Head.Args) != n || len(args) < n {
				return &errFailing{r, fmt.Sprintf("calls %v, defined with two arities", op)}
			}
			k, err := ck.call(f, kinds[:n])
			if err != nil {
				return err
			}
			if i == 0 {
				result = k
			} else if k != result {
				result = kindAny
			}
		}
		if len(args) > n {
			bind(env, args[n], result)
		}
		return nil
	}
	name := op.String()
	b := ast.BuiltinMap[name]
	total := totalBuiltins[name]
	if b == nil || total == nil {
		return &errFailing{r, fmt.Sprintf("calls %s, which may fail", name)}
	}
	n := len(b.Decl.FuncArgs().Args)
	if b.Name == ast.Concat.Name && len(args) >= n {
		kinds[1] = ck.stringsKind(args[1], env)
	}
	if len(args) < n || !total(args[:n], kinds[:n]) {
		return &errFailing{r, fmt.Sprintf("calls %s on arguments it may fail on (%v)", name, ast.NewExpr(terms))}
	}
	switch {
	case b.Name == ast.Equality.Name:
		bind(env, args[0], kinds[1])
		bind(env, args[1], kinds[0])
	case len(args) > n:
		bind(env, args[n], kindOfType(b.Decl.Result()))
	}
	return nil
}

// stringsKind is kindArray for an array or set literal of strings (what
// concat joins without failing), kindAny for anything else.
func (ck *equalityCheck) stringsKind(t *ast.Term, env map[ast.Var]valueKind) valueKind {
	var elems []*ast.Term
	switch c := t.Value.(type) {
	case *ast.Array:
		c.Foreach(func(x *ast.Term) { elems = append(elems, x) })
	case ast.Set:
		elems = c.Slice()
	default:
		return kindAny
	}
	for _, x := range elems {
		if ck.kind(x, env) != kindString {
			return kindAny
		}
	}
	return kindArray
}

// bind records that variable t has a value of kind k.
func bind(env map[ast.Var]valueKind, t *ast.Term, k valueKind) {
	if v, ok := t.Value.(ast.Var); ok && env[v] == kindAny {
		env[v] = k
	}
}

// kind is what is known of the kind of t's value.
func (ck *equalityCheck) kind(t *ast.Term, env map[ast.Var]valueKind) valueKind {
	switch v := t.Value.(type) {
	case ast.Var:
		return env[v]
	case ast.Ref:
		switch {
		case v[0].Equal(ast.InputRootDocument):
			return ck.inputKind(v)
		case v[0].Equal(ast.DefaultRootDocument) && v.IsGround():
			return kindOfType(ck.e.compiler.TypeEnv.GetByRef(v))
		}
		return kindAny
	}
	return kindOfValue(t.Value)
}

// inputKind is what is known of the kind of an input reference: a field
// that varies has its kind from specialInputs, one the shape shares the
// kind of its known value.
func (ck *equalityCheck) inputKind(ref ast.Ref) valueKind {
	if len(ref) < 2 {
		return kindAny
	}
	for _, f := range specialInputs {
		if ref[1].Value.Compare(ast.String(f.key)) == 0 {
			if len(ref) == 2 {
				return f.kind
			}
			return kindAny
		}
	}
	var cur ast.Value = ck.known
	for _, p := range ref[1:] {
		if !ast.IsConstant(p.Value) {
			return kindAny
		}
		var next *ast.Term
		switch c := cur.(type) {
		case ast.Object:
			next = c.Get(p)
		case *ast.Array:
			if n, ok := p.Value.(ast.Number); ok {
				if i, ok := n.Int(); ok && i >= 0 && i < c.Len() {
					next = c.Elem(i)
				}
			}
		}
		if next == nil {
			return kindAny // undefined: no call on it is evaluated
		}
		cur = next.Value
	}
	return kindOfValue(cur)
}

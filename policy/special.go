package policy

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// An Authorizer asks the same decision over and over with inputs that
// differ only in the key, its path, the size and the retention plan: the
// principal, the root, the checkpoint facts, the action and the condition
// repeat. OPA's partial evaluation specialises the policy for the parts
// that repeat, once per call shape, so that each call evaluates only what
// depends on the key: for a job's create-only put, one startswith.
//
// The specialisation keeps the policy's answer whole:
//   - the residual is the violation set (data.ckgate.gateway.violations),
//     evaluated per call with the full input against the policy's own
//     rules and the support rules partial evaluation wrote;
//   - the decision itself is specialised only when, for the known part of
//     the input, it depends on nothing but the violation set: its residual
//     then names no input field and no document other than the violations.
//     Its answer on no violations is evaluated once (the policy's own
//     decision, with the violation set empty) and returned while the
//     violation set stays empty;
//   - any violation, error, undefined or unexpected result sends the call
//     to the full evaluation, which decides it as it always did.
//
// Partial evaluation leaves nondeterministic builtins (time, http.send)
// in the residual, so they run on every call as before.

// specialUnknowns are the input fields that vary between the calls of one
// shape.
var (
	specialUnknowns    = []string{"input.key", "input.path", "input.location", "input.size", "input.plan"}
	specialUnknownKeys = []ast.Value{ast.String("key"), ast.String("path"), ast.String("location"), ast.String("size"), ast.String("plan")}
)

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
		if r.HasPrefix(specialViolations) {
			return true // the violation set, evaluated on every call
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

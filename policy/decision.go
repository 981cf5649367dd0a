package policy

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/ckgate/ckgate/gateway"
)

// RuleFailClosed is the id of the engine's own denial: the policy could not
// be evaluated, or its decision was undefined or malformed.
const RuleFailClosed = "CKG-P000"

// ErrUndefined: the policy produced no decision (fail closed).
var ErrUndefined = errors.New("policy decision undefined")

// Violation is one rule a decision hit.
type Violation struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Severity string `json:"severity"`
	Msg      string `json:"msg"`
}

// Decision is the policy's answer on one input.
type Decision struct {
	Allow bool
	// Deny lists the rules that refuse; empty when allowed.
	Deny []Violation
	// Warn lists the rules of severity warn that hit: reported, never
	// refusing.
	Warn []Violation
	// Overridden lists the rules an admin's break glass overrode.
	Overridden []Violation
	BreakGlass bool
	Reason     string // the admin's stated reason
	// Err is the evaluation error of a fail-closed denial.
	Err error
}

// Rules returns the ids of the denying (or, on break glass, overridden) rules.
func (d Decision) Rules() []string {
	vs := d.Deny
	if d.BreakGlass {
		vs = d.Overridden
	}
	ids := make([]string, 0, len(vs))
	for _, v := range vs {
		ids = append(ids, v.ID)
	}
	return ids
}

// Decide evaluates the gateway decision for in. It never returns an
// allowing decision it could not evaluate: an error, a builtin error or an
// undefined result is a denial by RuleFailClosed carrying the cause in Err.
func (e *Engine) Decide(ctx context.Context, in Input) Decision {
	return e.decide(ctx, in.value())
}

func (e *Engine) decide(ctx context.Context, input ast.Value) Decision {
	if err := ctx.Err(); err != nil {
		return failClosed(err)
	}
	// rego's Eval watches ctx with a goroutine per call; a callback on ctx
	// cancels the evaluation just the same without one.
	cancel := topdown.NewCancel()
	stop := context.AfterFunc(ctx, cancel.Cancel)
	rs, err := e.gateway.Eval(ctx, rego.EvalParsedInput(input), rego.EvalExternalCancel(cancel), rego.EvalGenerateJSON(rawTerm),
		rego.EvalMetrics(noMetrics))
	stop()
	if err != nil {
		return failClosed(err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return failClosed(ErrUndefined)
	}
	t, ok := rs[0].Expressions[0].Value.(*ast.Term)
	if !ok {
		return failClosed(fmt.Errorf("policy decision is %T, not a term", rs[0].Expressions[0].Value))
	}
	d, err := parseDecision(t.Value)
	if err != nil {
		return failClosed(err)
	}
	return d
}

// noMetrics spares every decision the evaluator's own timers and counters
// (ckgate measures decisions itself: the decision log's elapsed time, the
// benchmarks).
var noMetrics = metrics.NoOp()

// rawTerm keeps a result as the evaluator's term: the decision is read
// from it directly instead of from a converted copy.
func rawTerm(t *ast.Term, _ *rego.EvalContext) (any, error) { return t, nil }

func failClosed(err error) Decision {
	return Decision{Err: err, Deny: []Violation{{
		ID: RuleFailClosed, Name: "fail-closed", Severity: "deny",
		Msg: "policy evaluation failed, so the request is refused: " + err.Error(),
	}}}
}

// parseDecision reads {"allow", "deny", "warn", "overridden",
// "break_glass", "reason"}. Anything else is malformed; an allow without a
// boolean true never allows.
func parseDecision(v ast.Value) (Decision, error) {
	obj, ok := v.(ast.Object)
	if !ok {
		return Decision{}, fmt.Errorf("policy decision is %s, not an object", ast.ValueName(v))
	}
	allow, ok := boolAt(obj, "allow")
	if !ok {
		return Decision{}, fmt.Errorf("policy decision has no boolean allow")
	}
	deny, err := parseViolations(obj.Get(keyTerm("deny")))
	if err != nil {
		return Decision{}, fmt.Errorf("policy decision deny: %w", err)
	}
	warn, err := parseViolations(obj.Get(keyTerm("warn")))
	if err != nil {
		return Decision{}, fmt.Errorf("policy decision warn: %w", err)
	}
	over, err := parseViolations(obj.Get(keyTerm("overridden")))
	if err != nil {
		return Decision{}, fmt.Errorf("policy decision overridden: %w", err)
	}
	bg, _ := boolAt(obj, "break_glass")
	reason := stringAt(obj, "reason")
	if allow && len(deny) > 0 {
		return Decision{}, fmt.Errorf("policy decision allows with %d denials", len(deny))
	}
	if !allow && len(deny) == 0 {
		deny = []Violation{{ID: RuleFailClosed, Name: "fail-closed", Severity: "deny", Msg: "the policy refused without naming a rule"}}
	}
	return Decision{Allow: allow, Deny: deny, Warn: warn, Overridden: over, BreakGlass: bg, Reason: reason}, nil
}

func keyTerm(k string) *ast.Term {
	if t, ok := keyTerms[k]; ok {
		return t
	}
	return str(k)
}

func boolAt(obj ast.Object, key string) (bool, bool) {
	t := obj.Get(keyTerm(key))
	if t == nil {
		return false, false
	}
	b, ok := t.Value.(ast.Boolean)
	return bool(b), ok
}

func stringAt(obj ast.Object, key string) string {
	if t := obj.Get(keyTerm(key)); t != nil {
		if s, ok := t.Value.(ast.String); ok {
			return string(s)
		}
	}
	return ""
}

// parseViolations reads a set or array of {"id", "name", "severity",
// "msg"}; absent is none.
func parseViolations(t *ast.Term) ([]Violation, error) {
	if t == nil {
		return nil, nil
	}
	var elems []*ast.Term
	switch c := t.Value.(type) {
	case *ast.Array:
		if c.Len() == 0 {
			return nil, nil
		}
		c.Foreach(func(x *ast.Term) { elems = append(elems, x) })
	case ast.Set:
		if c.Len() == 0 {
			return nil, nil
		}
		elems = c.Slice()
	case ast.Null:
		return nil, nil
	default:
		return nil, fmt.Errorf("%s, not a set", ast.ValueName(t.Value))
	}
	out := make([]Violation, 0, len(elems))
	for _, x := range elems {
		m, ok := x.Value.(ast.Object)
		if !ok {
			return nil, fmt.Errorf("violation is %s, not an object", ast.ValueName(x.Value))
		}
		viol := Violation{ID: stringAt(m, "id"), Name: stringAt(m, "name"), Severity: stringAt(m, "severity"), Msg: stringAt(m, "msg")}
		if viol.ID == "" {
			return nil, fmt.Errorf("violation without an id: %v", m)
		}
		out = append(out, viol)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ID != out[j].ID {
			return out[i].ID < out[j].ID
		}
		return out[i].Msg < out[j].Msg
	})
	return out, nil
}

// Warning is an allowed decision's warnings (Decision.Warn), as an
// Authorizer reports them (WithWarn).
type Warning struct {
	Action     string
	Key        string
	Path       string // the canonical location
	Violations []Violation
}

// String names the mutation and every warning rule with its message.
func (w Warning) String() string {
	return fmt.Sprintf("%s %s: %s", w.Action, gateway.Redact(w.Path), violationList(w.Violations))
}

// violationList is "rule ID (name): msg; ...".
func violationList(vs []Violation) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "rule %s", v.ID)
		if v.Name != "" && v.Name != v.ID {
			fmt.Fprintf(&b, " (%s)", v.Name)
		}
		b.WriteString(": ")
		b.WriteString(v.Msg)
	}
	return b.String()
}

// DeniedError is a policy refusal. errors.Is(err, gateway.ErrDenied) holds;
// the message names every rule that refused.
type DeniedError struct {
	Action     string
	Path       string
	DecisionID string
	Violations []Violation
	Err        error // the evaluation error of a fail-closed denial
}

func (e *DeniedError) Error() string {
	if len(e.Violations) == 0 {
		return fmt.Sprintf("%s %s refused", e.Action, e.Path)
	}
	return violationList(e.Violations)
}

// Is makes errors.Is(err, gateway.ErrDenied) true, except for a fail-closed
// refusal because the store did not answer (the evaluation error is
// gateway.ErrUnavailable, reachable through Unwrap): that is no verdict of
// the policies but a store briefly unavailable, and every caller (exit
// status, ckgate serve's 503, validate-access) must treat it as one, to be
// retried.
func (e *DeniedError) Is(target error) bool {
	return target == gateway.ErrDenied && !errors.Is(e.Err, gateway.ErrUnavailable)
}

// Unwrap returns the evaluation error of a fail-closed denial.
func (e *DeniedError) Unwrap() error { return e.Err }

// Rules returns the ids of the rules that refused.
func (e *DeniedError) Rules() []string {
	ids := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		ids[i] = v.ID
	}
	return ids
}

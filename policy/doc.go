// Package policy decides checkpoint mutations and audits checkpoint storage
// with OPA (Rego v1). The default policies are embedded from rego/; users
// add their own modules and data.
//
// # Engine
//
// New compiles the default policies (and any user directories) once and
// prepares two queries: data.ckgate.gateway.decision, asked for every Put
// and Delete through the gateway (see NewAuthorizer) and for every
// checkpoint open (see CheckOpen), and data.ckgate.audit.findings, asked by
// Audit. An evaluation error, a builtin error or an undefined decision
// denies: the engine fails closed.
//
// # Specialised decisions
//
// An Authorizer's calls repeat everything but the key, its path, the size
// and the retention plan. From a call shape's second call on (action,
// condition, whether the key exists, stream), the Authorizer decides it
// through OPA's partial evaluation of the policy for that shape: per call
// it evaluates only the residual violation set, and while that is empty
// returns the policy's own decision for no violations, evaluated once. A
// violation, an error or a decision that reads the input for itself
// (not only through data.ckgate.gateway.violations) is decided in full as
// before. Specialising a shape costs about 10 ms once; a decision then
// costs about 15 µs instead of 80 µs.
//
// # Gateway input
//
// Every Put and Delete through gateway.WithAuthorizer(store, NewAuthorizer(...))
// is decided on this input (see Input):
//
//	{"action": "put"|"delete", "key", "path", "root", "cond": "none"|"if-absent"|"if-match",
//	 "exists", "size", "stream", "principal": {"id", "kind", "reason"},
//	 "checkpoint": {"query_id", "latest_batch", "retain_from"},
//	 "plan": {"id", "obsolete": {KEY: reason}}, "known_queries": [{"query_id", "root"}]}
//
// Principal kinds are job, retention, housekeeping and admin; any other
// kind gets the least rights. Opening a checkpoint (CheckOpen, asked before
// gateway.OpenSession) uses action "open" with checkpoint.metadata_query_id.
// Known queries' roots come from data.ckgate.queries (--data FILE) and from
// the caller; a retention plan from the caller (WithPlan) or from
// data.ckgate.retention.plans[ROOT].
//
// # Rules
//
// Every default rule has a stable id (CKG-Pnnn for the gateway, CKG-Annn
// for the audit), a name, a severity and a message; Rules lists them. User
// rules are Rego packages under ckgate.gateway.rules (a set `deny` of
// {id, name, severity, msg}) or ckgate.audit.rules (a set `findings` of
// {id, name, severity, resource, msg}).
//
// # Errors
//
// A refusal is a *DeniedError: errors.Is(err, gateway.ErrDenied) holds and
// its message names the rule ids. Audit returns an error only when it could
// not audit at all; a lifecycle rule it could not read is a finding of
// severity "unknown", never a pass.
//
// # Decision log
//
// A DecisionLog writes every decision as one JSON line: decision id, time,
// principal, action, key, result and rule ids, with secrets masked. An admin
// principal breaks glass only with a stated reason and only when the
// decision is logged.
package policy

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
// # The guard
//
// Guard puts the policy in front of a store for one principal: every
// mutating command and `ckgate run` call it, so none forgets a step. Each
// Put and Delete is decided on the canonical location of the object it
// touches (gateway.CanonicalKey: symbolic links resolved on the local disk,
// one spelling for every root) and on every checkpoint root above it
// (RootFinder), and written with the condition the decision relied on: an
// unconditional put of a log entry decided on "absent" is written IfAbsent,
// on version v IfMatch(v).
//
// # Specialised decisions
//
// An Authorizer's calls repeat everything but the key, its location, the
// size and the retention plan. From a call shape's second call on (action,
// condition, whether the key exists, stream, the roots above it), the
// Authorizer decides it through OPA's partial evaluation of the policy for
// that shape, but only when no evaluation of its decision can fail (see
// special.go: default rules, and user rules that cannot conflict or error):
// per call it evaluates only the residual violation set, and while that is
// empty returns the policy's own decision for no violations, evaluated
// once. A violation, an error, or a shape whose equality is not shown is
// decided in full.
//
// # Gateway input
//
// Every Put and Delete through Guard is decided on this input (see Input
// for what each field means):
//
//	{"action": "put"|"delete", "key", "location", "path", "root", "roots", "scope",
//	 "cond": "none"|"if-absent"|"if-match", "exists", "size", "stream", "writer_session",
//	 "principal": {"id", "kind", "reason"},
//	 "checkpoint": {"query_id", "latest_batch", "retain_from"},
//	 "plan": {"id", "obsolete": {KEY: reason}}, "known_queries": [{"query_id", "root"}],
//	 "purge": {"log", "batch", "latest_offsets", "latest_commit", "restart_floor", "latest_compact"}}
//
// # Deletes of log entries: the query's own purge
//
// A streaming query deletes its own old log entries (Spark's purge keeps
// spark.sql.streaming.minBatchesToRetain batches, set as low as 1; its
// compacted file logs drop what a .compact covers), and fails when it may
// not. So a delete of offsets/N, commits/N, sources/S/N or _spark_metadata/N
// carries input.purge (PurgeFacts), read from one listing of the log's head
// when the delete is decided: the restart floor min(latest offsets − 1,
// latest commit), below which no restart reads an entry, and the newest
// .compact of a file log. The default rule CKG-P002 lets the job delete
// below them and nothing else (metadata never); a log only grows at its
// head and loses entries only below its floor, so a floor seen once stays
// true for every later delete. Without facts (a log the guarded store
// cannot list) the delete is refused.
//
// Principal kinds are job, retention, housekeeping, archive and admin; any
// other kind gets the least rights. Opening a checkpoint (CheckOpen, asked
// before gateway.OpenSession) uses action "open" with
// checkpoint.metadata_query_id. Known queries' roots come from
// data.ckgate.queries (--data FILE) and from the caller, canonicalised when
// they load; a retention plan from the caller (WithPlan) or from
// data.ckgate.retention.plans[SCOPE].
//
// # Rules
//
// Every default rule has a stable id (CKG-Pnnn for the gateway, CKG-Annn
// for the audit), a name, a severity and a message; Rules lists them. User
// rules are Rego packages ckgate.gateway.rules.NAME, with a set `deny` and
// a set `warn` of ckgate's violations ({id, name, severity, msg}) or of
// conftest-style messages (strings, or objects with "msg" and "code"),
// or packages ckgate.audit.rules.NAME with a set `findings` of {id, name,
// severity, resource, msg}. A denial refuses; a warning is reported
// (Decision.Warn, WithWarn, the decision log) and allows. A decision rule
// anywhere else (conftest's package main, a nested package, a deny that is
// not a set) is refused when the policy loads, by New and RunTests alike,
// and RunTests (`ckgate policy test`) compiles as `opa check --strict`.
// See docs/policy.md.
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

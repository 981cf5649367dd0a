# A user policy written the conftest way: sets `deny` and `warn` of
# messages, strings or objects with "msg" and "code". The gateway reads
# them in package ckgate.gateway.rules.NAME (not conftest's `main`). Load
# it with `ckgate ... --policy testdata/policies/conftest`; test it with
# `ckgate policy test testdata/policies/conftest`.
package ckgate.gateway.rules.team

max_bytes := (64 * 1024) * 1024

# Spark's _temporary directories are a job's scratch space: nothing is put
# there through the gateway.
deny contains msg if {
	input.action == "put"
	contains(input.location, "/_temporary/")
	msg := sprintf("%s may not put %s: _temporary is a job's scratch space", [input.principal.id, input.location])
}

# An object message: its code names the rule in refusals and the decision log.
deny contains {"msg": msg, "code": "TEAM-001"} if {
	input.action == "put"
	input.size > max_bytes
	msg := sprintf("%s puts %d bytes to %s; the team's limit is %d", [input.principal.id, input.size, input.location, max_bytes])
}

# A warning is reported (stderr, the decision log) and allows.
warn contains msg if {
	input.action == "put"
	input.cond == "none"
	input.principal.kind != "job"
	msg := sprintf("%s replaces %s unconditionally; a create-only put cannot lose a concurrent write", [input.principal.id, input.location])
}

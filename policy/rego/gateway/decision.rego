# The gateway's decision on one mutation (put, delete) or one checkpoint
# open. Every package ckgate.gateway.rules.NAME contributes a set `deny`
# and a set `warn`: ckgate's violations ({id, name, severity, msg}, built
# by lib.violation) or conftest-style messages (strings, or objects with
# "msg" and "code"), made violations by lib.entry. Users add their own
# packages there. A denial (severity deny) refuses; a warning (severity
# warn) is reported and allows. The default rules are one package, ckgate.gateway.rules.defaults,
# over several files (job, log_entries, delete, retention, open): one set
# to evaluate per decision instead of one per file. The decision is
#
#   {"allow": bool, "deny": [violations], "warn": [violations],
#    "overridden": [violations], "break_glass": bool, "reason": string}
#
# An admin principal that states a reason breaks glass: its violations are
# overridden (allowed) and listed, so the decision log records them.
package ckgate.gateway

import data.ckgate.lib

# violations are the denials and the warnings: one set, so that a decision
# specialised for a call shape (special.go) evaluates one set per call.
# The default rules' violations are built by lib.violation and taken as
# they are; every other package's entries go through lib.entry.
violations contains d if {
	some d in data.ckgate.gateway.rules.defaults.deny
}

violations contains lib.entry(name, "deny", d) if {
	some name
	some d in data.ckgate.gateway.rules[name].deny
	name != "defaults"
}

violations contains lib.entry(name, "warn", d) if {
	some name
	some d in data.ckgate.gateway.rules[name].warn
	name != "defaults"
}

denials := {v | some v in violations; v.severity == "deny"}

warnings := {v | some v in violations; v.severity != "deny"}

# reason is an admin's stated reason ("" when none).
default reason := ""

reason := trim_space(input.principal.reason)

# An admin stating a reason may break glass.
admin_with_reason if {
	input.principal.kind == "admin"
	reason != ""
}

# Exclusive rules rather than an else chain: written this way the decision
# partially evaluates, so an authorizer can specialise it for its principal
# and checkpoint once and evaluate only what depends on the key.
decision := {"allow": count(denials) == 0, "deny": denials, "warn": warnings, "overridden": set(), "break_glass": false, "reason": reason} if {
	not admin_with_reason
}

decision := {"allow": true, "deny": set(), "warn": warnings, "overridden": set(), "break_glass": false, "reason": reason} if {
	admin_with_reason
	count(denials) == 0
}

decision := {"allow": true, "deny": set(), "warn": warnings, "overridden": denials, "break_glass": true, "reason": reason} if {
	admin_with_reason
	count(denials) > 0
}

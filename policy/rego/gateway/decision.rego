# The gateway's decision on one mutation (put, delete) or one checkpoint
# open. Every package under ckgate.gateway.rules contributes a set `deny`
# of violations ({id, name, severity, msg}); users add their own packages
# there. The default rules are one package, ckgate.gateway.rules.defaults,
# over several files (job, log_entries, delete, retention, open): one set
# to evaluate per decision instead of one per file. The decision is
#
#   {"allow": bool, "deny": [violations], "overridden": [violations],
#    "break_glass": bool, "reason": string}
#
# An admin principal that states a reason breaks glass: its violations are
# overridden (allowed) and listed, so the decision log records them.
package ckgate.gateway

violations contains v if {
	some v in data.ckgate.gateway.rules[_].deny
	v.severity == "deny"
}

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
decision := {"allow": count(violations) == 0, "deny": violations, "overridden": set(), "break_glass": false, "reason": reason} if {
	not admin_with_reason
}

decision := {"allow": true, "deny": set(), "overridden": set(), "break_glass": false, "reason": reason} if {
	admin_with_reason
	count(violations) == 0
}

decision := {"allow": true, "deny": set(), "overridden": violations, "break_glass": true, "reason": reason} if {
	admin_with_reason
	count(violations) > 0
}

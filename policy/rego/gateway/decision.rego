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

reason := trim_space(object.get(input, ["principal", "reason"], ""))

default break_glass := false

break_glass if {
	input.principal.kind == "admin"
	reason != ""
	count(violations) > 0
}

# The common case first: nothing to refuse.
decision := {"allow": true, "deny": [], "overridden": [], "break_glass": false, "reason": ""} if {
	count(violations) == 0
} else := {"allow": true, "deny": [], "overridden": violations, "break_glass": true, "reason": reason} if {
	break_glass
} else := {"allow": false, "deny": violations, "overridden": [], "break_glass": false, "reason": reason}

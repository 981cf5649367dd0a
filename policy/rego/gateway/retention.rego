# A retention principal deletes only what a retention plan marked obsolete.
# The plan is {"id", "obsolete": {KEY: reason}}, KEY relative to the
# checkpoint root; it comes with the input (input.plan) or from data
# (data.ckgate.retention.plans[ROOT]).
package ckgate.gateway.rules.defaults

import data.ckgate.lib

deny contains lib.violation("CKG-P005", msg) if {
	input.principal.kind == "retention"
	input.action == "delete"
	not in_plan
	msg := sprintf("%s may not delete %s: no retention plan for %s marks it obsolete", [lib.principal_name, input.location, input.scope])
}

key := lib.rel(input.location, input.scope)

in_plan if input.plan.obsolete[key]

in_plan if data.ckgate.retention.plans[input.scope].obsolete[key]

# A plan is for one checkpoint (the scope): a file that is a log entry or
# state of another root above it (a root planted or nested around the
# scope) is that checkpoint's, and never the plan's to delete.
deny contains lib.violation("CKG-P005", msg) if {
	input.principal.kind == "retention"
	input.action == "delete"
	some r in input.roots
	r != input.scope
	lib.live_file_of(r)
	msg := sprintf("%s may not delete %s: it is a live file of checkpoint %s, not of %s whose plan this is", [lib.principal_name, input.location, r, input.scope])
}

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

# Rules for the job principal: the streaming query writing its checkpoint.
package ckgate.gateway.rules.defaults

import data.ckgate.lib

deny contains lib.violation("CKG-P001", msg) if {
	input.principal.kind == "job"
	input.action in {"put", "delete"}
	startswith(input.location, lib.scope_dir) == false # cheaper than a negation
	msg := sprintf("%s may %s only inside its checkpoint root %s, not %s", [lib.principal_name, input.action, input.scope, input.location])
}

deny contains lib.violation("CKG-P002", msg) if {
	input.principal.kind == "job"
	input.action == "delete"
	lib.is_log_key
	not lib.purgeable
	msg := sprintf("%s may not delete log entry %s of checkpoint %s: %s", [lib.principal_name, input.location, input.root, purge_refusal])
}

# purge_refusal says why a job's delete of a log entry is not its own
# purge of entries no restart needs.
default purge_refusal := "a restart needs it"

purge_refusal := sprintf("a restart needs it (restart floor %v: only entries below it may go)", [input.purge.restart_floor]) if {
	input.purge.log in {"offsets", "commits"}
	is_number(input.purge.restart_floor)
}

purge_refusal := sprintf("no later .compact covers it (newest compact %v)", [input.purge.latest_compact]) if {
	input.purge.log in {"sources", "spark_metadata"}
	is_number(input.purge.latest_compact)
}

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
	msg := sprintf("%s may not delete log entry %s of checkpoint %s", [lib.principal_name, input.location, input.root])
}

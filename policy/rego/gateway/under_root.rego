# Under a checkpoint root (any root above the location, or a known
# query's), only the owning query's writer session replaces anything (the
# writer record, the plan, a state file a task retry rewrites) and writes
# state; the archive copier creates state into a new root. Everyone else
# may only create new files there (if-absent), never state or log entries.
package ckgate.gateway.rules.defaults

import data.ckgate.lib

writer_job if {
	input.principal.kind == "job"
	input.writer_session == true
}

deny contains lib.violation("CKG-P009", msg) if {
	input.action == "put"
	not writer_job
	lib.overwrite
	some root in lib.checkpoint_roots
	lib.inside(input.location, root)
	msg := sprintf("%s may not replace %s (condition %s): only the owning query's writer session replaces files of checkpoint %s", [lib.principal_name, input.location, input.cond, root])
}

deny contains lib.violation("CKG-P009", msg) if {
	input.action == "put"
	not writer_job
	input.principal.kind != "archive"
	lib.is_state_key
	msg := sprintf("%s may not write state file %s: only the owning query's writer session writes state", [lib.principal_name, input.location])
}

# Log entries are create-only for every principal: a put that could
# replace an existing offsets/N, commits/N or _spark_metadata/N is refused.
# A put with condition if-match always replaces; one without a condition
# replaces unless the caller established that the key is absent
# (input.exists == false). A create-only put (if-absent) never replaces.
package ckgate.gateway.rules.defaults

import data.ckgate.lib

deny contains lib.violation("CKG-P003", msg) if {
	input.action == "put"
	lib.overwrite # before the key test: most puts are create-only
	lib.is_log_key
	msg := sprintf("%s may not overwrite log entry %s (condition %s): log entries are create-only", [lib.principal_name, input.location, input.cond])
}

# Only the query that owns a root writes its log entries, through its
# writer session; an archive copier creates them into a new root (its own
# rules keep it create-only). Housekeeping, retention, a job outside its
# writer session and an admin without break glass create none: a commit
# created by hand makes the restart skip a batch whose input is then lost.
may_create_log_entry if {
	input.principal.kind == "job"
	input.writer_session == true
}

may_create_log_entry if input.principal.kind == "archive"

deny contains lib.violation("CKG-P006", msg) if {
	input.action == "put"
	lib.is_log_key
	not may_create_log_entry
	msg := sprintf("%s may not write log entry %s: only the owning query's writer session creates log entries", [lib.principal_name, input.location])
}

# A metadata file inside a checkpoint's tree would start a root inside a
# root: refused for everyone (an admin breaks glass).
deny contains lib.violation("CKG-P007", msg) if {
	input.action == "put"
	lib.nested_root_metadata
	msg := sprintf("%s may not create %s: a metadata file inside checkpoint %s would start a checkpoint inside a checkpoint", [lib.principal_name, input.location, input.root])
}

# Log entries are create-only for every principal: a put that could
# replace an existing offsets/N, commits/N or _spark_metadata/N is refused.
# A put with condition if-match always replaces; one without a condition
# replaces unless the caller established that the key is absent
# (input.exists == false). A create-only put (if-absent) never replaces.
package ckgate.gateway.rules.defaults

import data.ckgate.lib

deny contains lib.violation("CKG-P003", msg) if {
	input.action == "put"
	overwrite # before the key test: most puts are create-only
	lib.is_log_key
	msg := sprintf("%s may not overwrite log entry %s (condition %s): log entries are create-only", [lib.principal_name, input.path, input.cond])
}

overwrite if input.cond == "if-match"

overwrite if {
	input.cond == "none"
	not input.exists == false
}

# An archive principal copies a whole checkpoint into a new root (archive,
# fresh-start, rehearsal copies): it creates, create-only, inside its scope,
# and never deletes or overwrites anything.
package ckgate.gateway.rules.defaults

import data.ckgate.lib

deny contains lib.violation("CKG-P008", msg) if {
	input.principal.kind == "archive"
	not archive_create
	msg := sprintf("%s may only create (if-absent) inside %s, not %s %s (condition %s)", [lib.principal_name, input.scope, input.action, input.location, object.get(input, "cond", "none")])
}

archive_create if {
	input.action == "put"
	input.cond == "if-absent"
	startswith(input.location, lib.scope_dir)
	lib.scope_dir != ""
}

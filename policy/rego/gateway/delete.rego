# Deletes under a checkpoint root belong to the job (its own garbage) and
# to retention (its plan). Housekeeping, admin without break glass, and any
# principal of an unknown kind delete nothing there.
package ckgate.gateway.rules.defaults

import data.ckgate.lib

may_delete_under_root := {"job", "retention"}

deny contains lib.violation("CKG-P004", msg) if {
	input.action == "delete"
	not lib.principal_kind in may_delete_under_root
	some root in lib.checkpoint_roots
	lib.inside(input.location, root)
	msg := sprintf("%s may not delete %s: it is under checkpoint root %s", [lib.principal_name, input.location, root])
}

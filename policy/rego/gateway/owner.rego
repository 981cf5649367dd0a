# One query per checkpoint behind a shared front door: the first job
# principal to write a root's metadata owns the root (input.root_owner,
# recorded create-only in <root>/_ckgate/root-owner when the guard is made
# with root owners, as `ckgate serve` makes it).
package ckgate.gateway.rules.defaults

import data.ckgate.lib

deny contains lib.violation("CKG-P014", msg) if {
	input.principal.kind == "job"
	input.action in {"put", "delete"}
	is_string(input.root_owner)
	input.root_owner != input.principal.id
	msg := sprintf("%s may not %s %s: its checkpoint is owned by %s, the first principal to write its metadata (one query per checkpoint)", [lib.principal_name, input.action, input.location, input.root_owner])
}

deny contains lib.violation("CKG-P014", msg) if {
	input.action in {"put", "delete"}
	some name in {"/_ckgate/root-owner", "/_ckgate/committer"}
	endswith(input.location, name)
	msg := sprintf("%s may not %s %s: a root's owner and committer records are written by the gateway only", [lib.principal_name, input.action, input.location])
}

# A zombie driver: a process (input.process, named by S3A's audit referrer)
# that a newer process has committed over, per the root's committer record.
deny contains lib.violation("CKG-P015", msg) if {
	input.action in {"put", "delete"}
	is_string(input.process.fenced_by)
	msg := sprintf("%s may not %s %s: process %s is a zombie driver, committed over by process %s at batch %v", [lib.principal_name, input.action, input.location, input.process.id, input.process.fenced_by, input.process.fenced_at_batch])
}

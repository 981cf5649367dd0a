# Opening a checkpoint: one query per checkpoint path. input.checkpoint
# carries the query id the caller opens for and the query id found in the
# root's metadata file (absent or "" when there is none yet).
package ckgate.gateway.rules.defaults

import data.ckgate.lib

deny contains lib.violation("CKG-P012", msg) if {
	input.action == "open"
	object.get(input, ["checkpoint", "query_id"], "") == ""
	msg := sprintf("%s opens checkpoint %s without a query id", [lib.principal_name, input.root])
}

deny contains lib.violation("CKG-P010", msg) if {
	input.action == "open"
	md := input.checkpoint.metadata_query_id
	md != ""
	md != input.checkpoint.query_id
	msg := sprintf("shared checkpoint: %s holds query %s in its metadata, not %s", [input.root, md, input.checkpoint.query_id])
}

deny contains lib.violation("CKG-P011", msg) if {
	input.action == "open"
	some q in lib.known_queries
	q.query_id != input.checkpoint.query_id
	rel := lib.relation(input.root, q.root)
	msg := sprintf("shared checkpoint path: %s (query %s) is %s %s, the root of query %s", [input.root, input.checkpoint.query_id, rel, q.root, q.query_id])
}

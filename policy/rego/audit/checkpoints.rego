# Checkpoints against each other and against the tables around them.
package ckgate.audit.rules.checkpoints

import data.ckgate.lib

# Delta's VACUUM skips directories whose name starts with '_' or '.',
# except _delta_index and _change_data, which hold table data.
hidden(name) if {
	startswith(name, "_")
	not startswith(name, "_delta_index")
	not startswith(name, "_change_data")
}

hidden(name) if startswith(name, ".")

findings contains lib.finding("CKG-A004", cp.url, msg) if {
	some cp in input.checkpoints
	t := cp.delta_table
	first := split(t.rel, "/")[0]
	not hidden(first)
	msg := sprintf("checkpoint %s is inside Delta table %s under %q, which VACUUM treats as table data and deletes; move it out of the table or under a directory starting with '_'", [cp.url, t.url, first])
}

findings contains lib.finding("CKG-A005", b.url, msg) if {
	some a in input.checkpoints
	some b in input.checkpoints
	lib.inside(b.url, a.url)
	msg := sprintf("checkpoint %s (query %s) is inside checkpoint %s (query %s): nested checkpoint roots", [b.url, object.get(b, "query_id", ""), a.url, object.get(a, "query_id", "")])
}

findings contains lib.finding("CKG-A005", cp.url, msg) if {
	some cp in input.checkpoints
	w := object.get(cp, "writer_query_id", "")
	w != ""
	cp.query_id != ""
	w != cp.query_id
	msg := sprintf("checkpoint %s holds query %s in its metadata but its writer record names query %s: two queries share it", [cp.url, cp.query_id, w])
}

findings contains lib.finding("CKG-A005", cp.url, msg) if {
	some cp in input.checkpoints
	some q in lib.known_queries
	cp.query_id != ""
	q.query_id != cp.query_id
	rel := lib.relation(cp.url, q.root)
	msg := sprintf("checkpoint %s (query %s) is %s %s, the root of query %s", [cp.url, cp.query_id, rel, q.root, q.query_id])
}

findings contains lib.finding("CKG-A010", cp.url, msg) if {
	some cp in input.checkpoints
	object.get(cp, "error", "") != ""
	msg := sprintf("could not read checkpoint %s: %s", [cp.url, cp.error])
}

findings contains lib.finding("CKG-A011", cp.url, msg) if {
	some cp in input.checkpoints
	owner := object.get(cp, ["sink", "owner_query_id"], "")
	owner != ""
	cp.query_id != ""
	owner != cp.query_id
	msg := sprintf("checkpoint %s (query %s) writes file sink %s, which is owned by query %s (checkpoint %s): a run of it is refused on that sink; give it a sink of its own or hand the sink over (ckgate run --adopt-sink, or the owner's fresh start)", [cp.url, cp.query_id, cp.sink.url, owner, object.get(cp, ["sink", "owner_checkpoint"], "")])
}

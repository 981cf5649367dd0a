# Taking over a file sink that another query (or Spark) wrote: action
# "adopt_sink", with input.location the sink, input.root the adopting
# query's checkpoint and input.sink its owner, latest manifest and how the
# hand-over was asked for. By default the job principal of a query with an
# id may adopt a sink; add rules here to refuse more (a sink of another
# team, a hand-over without a fresh start).
package ckgate.gateway.rules.defaults

import data.ckgate.lib

deny contains lib.violation("CKG-P013", msg) if {
	input.action == "adopt_sink"
	input.principal.kind != "job"
	msg := sprintf("%s may not take over file sink %s: only the job principal of the query that will write it adopts a sink", [lib.principal_name, input.location])
}

deny contains lib.violation("CKG-P013", msg) if {
	input.action == "adopt_sink"
	object.get(input, ["checkpoint", "query_id"], "") == ""
	msg := sprintf("%s takes over file sink %s without a query id", [lib.principal_name, input.location])
}

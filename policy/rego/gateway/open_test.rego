package ckgate.gateway.open_test

import data.ckgate.gateway

open(root, query_id, md) := {
	"action": "open",
	"root": root,
	"principal": {"id": "svc", "kind": "job"},
	"checkpoint": {"query_id": query_id, "metadata_query_id": md},
}

ids(d) := {v.id | some v in d.deny}

known := [{"query_id": "q1", "root": "s3://b/team/q1"}]

test_open_new_checkpoint_allowed if {
	d := gateway.decision with input as open("s3://b/team/q1", "q1", "")
	d.allow
}

test_open_own_checkpoint_allowed if {
	d := gateway.decision with input as open("s3://b/team/q1", "q1", "q1") with data.ckgate.queries as known
	d.allow
}

test_p010_metadata_of_other_query_denied if {
	d := gateway.decision with input as open("s3://b/team/q1", "q2", "q1")
	ids(d) == {"CKG-P010"}
}

test_p011_equal_root_denied if {
	d := gateway.decision with input as open("s3://b/team/q1/", "q2", "") with data.ckgate.queries as known
	ids(d) == {"CKG-P011"}
	some v in d.deny
	contains(v.msg, "equal to")
}

test_p011_inside_root_denied if {
	d := gateway.decision with input as open("s3://b/team/q1/sub", "q2", "") with data.ckgate.queries as known
	some v in d.deny
	v.id == "CKG-P011"
	contains(v.msg, "inside")
}

test_p011_above_root_denied if {
	d := gateway.decision with input as open("s3://b/team", "q2", "") with data.ckgate.queries as known
	some v in d.deny
	v.id == "CKG-P011"
	contains(v.msg, "above")
}

test_p011_sibling_root_allowed if {
	d := gateway.decision with input as open("s3://b/team/q10", "q10", "") with data.ckgate.queries as known
	d.allow
}

test_p011_known_queries_from_input if {
	inp := object.union(open("s3://b/team/q1", "q2", ""), {"known_queries": known})
	d := gateway.decision with input as inp
	ids(d) == {"CKG-P011"}
}

test_p012_open_without_query_id_denied if {
	d := gateway.decision with input as open("s3://b/team/q1", "", "")
	ids(d) == {"CKG-P012"}
}

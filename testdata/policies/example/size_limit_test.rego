package ckgate.gateway.rules.example_test

import data.ckgate.gateway

put(key, size) := {
	"action": "put",
	"key": key,
	"path": concat("/", ["s3://b/q1", key]),
	"root": "s3://b/q1",
	"cond": "if-absent",
	"size": size,
	"principal": {"id": "svc", "kind": "job"},
	"checkpoint": {"query_id": "q1"},
}

test_small_put_allowed if {
	d := gateway.decision with input as put("sources/0/0", 100)
	d.allow
}

test_large_put_denied if {
	d := gateway.decision with input as put("sources/0/0", 2000000)
	not d.allow
	{v.id | some v in d.deny} == {"EXAMPLE-001"}
}

test_large_state_file_allowed if {
	d := gateway.decision with input as put("state/0/0/1.snapshot", 2000000)
	d.allow
}

package ckgate.gateway.rules.team_test

import data.ckgate.gateway
import data.ckgate.gateway.rules.team

put(key, size, cond) := {
	"action": "put",
	"key": key,
	"location": concat("/", ["s3://lake/events", key]),
	"path": concat("/", ["s3://lake/events", key]),
	"root": "",
	"roots": [],
	"scope": "s3://lake/events",
	"cond": cond,
	"size": size,
	"principal": {"id": "etl", "kind": "housekeeping"},
	"checkpoint": {},
}

# The rule's own set, as conftest tests it ...
test_temporary_denied if {
	some msg in team.deny with input as put("_temporary/0/part-0", 10, "if-absent")
	contains(msg, "scratch space")
}

# ... and the gateway's decision on the same input: what it enforces.
test_temporary_refused_by_the_gateway if {
	d := gateway.decision with input as put("_temporary/0/part-0", 10, "if-absent")
	not d.allow
	{v.id | some v in d.deny} == {"team"}
}

test_large_put_refused_by_code if {
	d := gateway.decision with input as put("part-0.parquet", 100000000, "if-absent")
	not d.allow
	{v.id | some v in d.deny} == {"TEAM-001"}
}

test_overwrite_warned_and_allowed if {
	d := gateway.decision with input as put("part-0.parquet", 10, "none")
	d.allow
	{v.id | some v in d.warn} == {"team"}
}

test_small_create_allowed_quietly if {
	d := gateway.decision with input as put("part-0.parquet", 10, "if-absent")
	d.allow
	count(d.warn) == 0
}

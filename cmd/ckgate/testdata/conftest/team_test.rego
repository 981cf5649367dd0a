package ckgate.gateway.rules.team_test

import data.ckgate.gateway
import data.ckgate.gateway.rules.team

put(loc) := {"action": "put", "key": "x", "location": loc, "path": loc, "root": "", "roots": [], "scope": "s3://b", "cond": "if-absent", "principal": {"id": "alice", "kind": "admin"}}

test_exe_denied if {
	some msg in team.deny with input as put("s3://b/a.exe")
	startswith(msg, "no executables")
	not gateway.decision.allow with input as put("s3://b/a.exe")
}

test_tmp_denied_by_code if {
	d := gateway.decision with input as put("s3://b/a.tmp")
	{v.id | some v in d.deny} == {"TEAM-007"}
}

test_bak_warned if {
	d := gateway.decision with input as put("s3://b/a.bak")
	d.allow
	count(d.warn) == 1
}

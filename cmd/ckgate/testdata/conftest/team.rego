package ckgate.gateway.rules.team

deny contains msg if {
	input.action == "put"
	endswith(input.location, ".exe")
	msg := sprintf("no executables in the lake: %s", [input.location])
}

deny contains {"msg": "no temporary files", "code": "TEAM-007"} if {
	input.action == "put"
	endswith(input.location, ".tmp")
}

warn contains msg if {
	input.action == "put"
	endswith(input.location, ".bak")
	msg := "a backup file: keep it out of the lake"
}

# An example user policy: no object put through the gateway may exceed
# data.example.max_bytes, except a job's state files. Load it with
# `ckgate ... --policy testdata/policies/example`; test it with
# `ckgate policy test testdata/policies/example`.
package ckgate.gateway.rules.example

import data.ckgate.lib

deny contains lib.violation("EXAMPLE-001", msg) if {
	input.action == "put"
	input.size > data.example.max_bytes
	not state_file
	msg := sprintf("%s puts %d bytes to %s; at most %d bytes are allowed", [lib.principal_name, input.size, input.path, data.example.max_bytes])
}

state_file if startswith(lib.rel(input.path, input.root), "state/")

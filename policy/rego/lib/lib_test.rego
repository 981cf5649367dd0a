package ckgate.lib_test

import data.ckgate.catalog
import data.ckgate.lib

test_inside if {
	lib.inside("s3://b/q1/offsets/0", "s3://b/q1")
	lib.inside("s3://b/q1/offsets/0", "s3://b/q1/")
	not lib.inside("s3://b/q10/offsets/0", "s3://b/q1")
	not lib.inside("s3://b/q1", "s3://b/q1")
}

test_rel if {
	lib.rel("s3://b/q1/offsets/0", "s3://b/q1") == "offsets/0"
	not lib.rel("s3://b/q2/offsets/0", "s3://b/q1")
}

test_log_entry if {
	lib.log_entry("offsets/0")
	lib.log_entry("commits/123")
	not lib.log_entry("offsets/.0.tmp")
	not lib.log_entry("offsets/0/x")
	not lib.log_entry("state/0/0/1.delta")
	not lib.log_entry("sources/0/0")
}

test_sink_log_entry if {
	lib.sink_log_entry("s3://b/out/_spark_metadata/0")
	lib.sink_log_entry("out/_spark_metadata/19.compact")
	not lib.sink_log_entry("out/_spark_metadata/x")
	not lib.sink_log_entry("out/part-0000.parquet")
}

test_violation_uses_catalogue if {
	v := lib.violation("CKG-P002", "m")
	v.name == "job-deletes-log-entry"
	v.severity == "deny"
}

test_violation_of_unknown_id_is_a_denial if {
	v := lib.violation("MY-9", "m")
	v.name == "MY-9"
	v.severity == "deny"
}

test_every_catalogue_entry_is_complete if {
	every id, r in catalog.rules {
		r.name != ""
		r.severity in {"deny", "warn", "unknown"}
		r.scope in {"gateway", "open", "audit"}
		r.description != ""
		regex.match(`^CKG-[PA][0-9]{3}$`, id)
	}
}

test_entry_of_each_shape if {
	lib.entry("p", "deny", "m") == {"id": "p", "name": "p", "severity": "deny", "msg": "m"}
	lib.entry("p", "warn", {"msg": "m", "code": "C"}) == {"id": "C", "name": "p", "severity": "warn", "msg": "m"}
	lib.entry("p", "deny", {"msg": "m", "id": "I", "code": "C", "name": "n"}) == {"id": "I", "name": "n", "severity": "deny", "msg": "m"}
	lib.entry("p", "deny", {"msg": "m", "severity": "warn"}).severity == "warn"
	lib.entry("p", "deny", 5) == {"id": "p", "name": "p", "severity": "deny", "msg": "5"}
	lib.entry("p", "deny", "").msg == "(an empty message)"
	lib.entry("p", "deny", {"msg": 3}).msg == `{"msg": 3}`
}

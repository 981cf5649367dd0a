package ckgate.audit_test

import data.ckgate.audit

dcp := {"url": "s3://b/q1", "bucket": "b", "path": "q1", "query_id": "q1", "entries": ["commits/", "metadata", "offsets/"], "delta_sources": ["tbl-1"]}

table(props) := object.union({"url": "s3://b/tables/t", "id": "tbl-1", "latest_version": 40, "commits": 40, "log_retention_hours": 720, "deleted_file_retention_hours": 168, "log_cleanup": true, "growing": true}, props)

drun(cps, tables) := fs if {
	fs := audit.findings with input as {"outage_window_hours": 72, "checkpoints": cps, "buckets": [], "delta_tables": tables}
}

test_a012_defaults_pass if {
	count(drun([dcp], [table({})])) == 0
}

test_a012_short_vacuum_retention if {
	fs := drun([dcp], [table({"deleted_file_retention_hours": 24})])
	ids(fs) == {"CKG-A012"}
	some f in fs
	contains(f.msg, "deletedFileRetentionDuration")
	f.resource == "s3://b/tables/t"
}

test_a012_short_log_retention if {
	fs := drun([dcp], [table({"log_retention_hours": 48})])
	ids(fs) == {"CKG-A012"}
	some f in fs
	contains(f.msg, "logRetentionDuration")
}

test_a012_not_read_by_any_checkpoint if {
	count(drun([object.union(dcp, {"delta_sources": ["other"]})], [table({"deleted_file_retention_hours": 1})])) == 0
}

test_a013_log_cleanup_disabled_growing if {
	ids(drun([dcp], [table({"log_cleanup": false, "log_retention_hours": 1})])) == {"CKG-A013"}
	count(drun([dcp], [table({"log_cleanup": false, "growing": false})])) == 0
}

test_a014_unreadable if {
	ids(drun([dcp], [{"url": "s3://b/x", "error": "not a Delta table"}])) == {"CKG-A014"}
}

package ckgate.audit_test

import data.ckgate.audit

cp := {"url": "s3://b/team/q1", "bucket": "b", "path": "team/q1", "query_id": "q1", "entries": ["commits/", "metadata", "offsets/", "state/"]}

rule(id, prefixes, actions) := {"id": id, "enabled": true, "scope": {"prefixes": prefixes}, "actions": actions}

bucket(rules) := {"bucket": "b", "provider": "s3", "source": "lc.json", "rules": rules}

expire(days) := {"kind": "expire", "age_days": days}

run(cps, buckets) := fs if {
	fs := audit.findings with input as {"outage_window_hours": 72, "checkpoints": cps, "buckets": buckets}
}

ids(fs) := {f.id | some f in fs}

# --- CKG-A001 lifecycle-expires-checkpoint

test_a001_whole_bucket_expiration if {
	fs := run([cp], [bucket([rule("all", [], [expire(30)])])])
	ids(fs) == {"CKG-A001"}
	some f in fs
	f.resource == "s3://b/team/q1"
	contains(f.msg, `"all"`)
	contains(f.msg, "30 days")
}

test_a001_prefix_above_checkpoint if {
	fs := run([cp], [bucket([rule("team", ["team/"], [expire(30)])])])
	ids(fs) == {"CKG-A001"}
}

test_a001_string_prefix_covers if {
	fs := run([cp], [bucket([rule("t", ["team/q"], [expire(30)])])])
	ids(fs) == {"CKG-A001"}
}

test_a001_prefix_inside_checkpoint if {
	fs := run([cp], [bucket([rule("state", ["team/q1/state/"], [expire(30)])])])
	ids(fs) == {"CKG-A001"}
}

test_a001_prefix_beside_checkpoint_files_passes if {
	fs := run([cp], [bucket([rule("tmp", ["team/q1/tmp/"], [expire(30)])])])
	fs == set()
}

test_a001_other_prefix_passes if {
	fs := run([cp], [bucket([rule("logs", ["logs/", "team/q10/"], [expire(1)])])])
	fs == set()
}

test_a001_checkpoint_at_bucket_root if {
	root_cp := object.union(cp, {"url": "s3://b", "path": "", "entries": []})
	ids(run([root_cp], [bucket([rule("off", ["offsets/"], [expire(30)])])])) == {"CKG-A001"}
	run([root_cp], [bucket([rule("logs", ["logs/"], [expire(30)])])]) == set()
}

test_a001_disabled_rule_passes if {
	r := object.union(rule("all", [], [expire(1)]), {"enabled": false})
	run([cp], [bucket([r])]) == set()
}

test_a001_tag_scoped_rule_passes if {
	r := object.union(rule("tagged", [], [expire(1)]), {"scope": {"prefixes": [], "tags": {"class": "scratch"}}})
	run([cp], [bucket([r])]) == set()
}

test_a001_other_bucket_passes if {
	b := object.union(bucket([rule("all", [], [expire(30)])]), {"bucket": "other"})
	run([cp], [b]) == set()
}

test_a001_date_expiration if {
	fs := run([cp], [bucket([rule("d", [], [{"kind": "expire", "date": "2024-01-01T00:00:00Z"}])])])
	some f in fs
	f.id == "CKG-A001"
	contains(f.msg, "on 2024-01-01")
}

test_a001_azure_container_scope if {
	r := object.union(rule("az", ["ckpt/team/"], [expire(30)]), {"scope": {"container_in_prefix": true, "prefixes": ["ckpt/team/"]}})
	az := object.union(cp, {"bucket": "ckpt", "url": "az://acct/ckpt/team/q1"})
	ids(run([az], [object.union(bucket([r]), {"bucket": ""})])) == {"CKG-A001"}
	other := object.union(az, {"bucket": "logs"})
	run([other], [object.union(bucket([r]), {"bucket": ""})]) == set()
	local := object.union(cp, {"bucket": "", "url": "file:///data/team/q1"})
	ids(run([local], [object.union(bucket([r]), {"bucket": ""})])) == {"CKG-A001"}
}

test_a001_azure_partial_container_name if {
	r := object.union(rule("az", ["ck"], [expire(30)]), {"scope": {"container_in_prefix": true, "prefixes": ["ck"]}})
	az := object.union(cp, {"bucket": "ckpt", "url": "az://acct/ckpt/team/q1"})
	ids(run([az], [object.union(bucket([r]), {"bucket": ""})])) == {"CKG-A001"}
}

test_a001_azure_append_blobs_only_passes if {
	r := object.union(rule("az", [], [expire(30)]), {"scope": {"blob_types": ["appendBlob"]}})
	run([cp], [bucket([r])]) == set()
}

test_a001_gcs_custom_time_rule_passes if {
	r := object.union(rule("ct", [], [expire(1)]), {"scope": {"requires": ["customTime"]}})
	run([cp], [bucket([r])]) == set()
}

test_a001_storage_class_scope if {
	cold_only := object.union(rule("c", [], [expire(400)]), {"scope": {"storage_classes": ["COLDLINE"]}})
	run([cp], [bucket([cold_only])]) == set()
	std := object.union(rule("s", [], [expire(400)]), {"scope": {"storage_classes": ["STANDARD", "COLDLINE"]}})
	ids(run([cp], [bucket([std])])) == {"CKG-A001"}
}

# --- CKG-A002 / CKG-A009 tiers

test_a002_archive_transition if {
	fs := run([cp], [bucket([rule("glacier", [], [{"kind": "archive", "age_days": 90, "storage_class": "GLACIER"}])])])
	ids(fs) == {"CKG-A002"}
	some f in fs
	contains(f.msg, "GLACIER")
}

test_a009_cold_tier_warns if {
	fs := run([cp], [bucket([rule("ia", [], [{"kind": "cold", "age_days": 1, "storage_class": "STANDARD_IA"}])])])
	ids(fs) == {"CKG-A009"}
	some f in fs
	f.severity == "warn"
}

# --- CKG-A003 outage window

test_a003_short_expiration if {
	fs := run([cp], [bucket([rule("short", [], [expire(2)])])])
	ids(fs) == {"CKG-A001", "CKG-A003"}
	some f in fs
	f.id == "CKG-A003"
	contains(f.msg, "72 hours")
}

test_a003_exactly_the_window_passes if {
	fs := run([cp], [bucket([rule("three", [], [expire(3)])])])
	ids(fs) == {"CKG-A001"}
}

test_a003_noncurrent_expiry_shorter_than_window if {
	fs := run([cp], [bucket([rule("nc", [], [{"kind": "noncurrent_expire", "age_days": 1}])])])
	ids(fs) == {"CKG-A003"}
}

test_a003_noncurrent_expiry_longer_than_window_passes if {
	run([cp], [bucket([rule("nc", [], [{"kind": "noncurrent_expire", "age_days": 30}])])]) == set()
}

test_a003_noncurrent_expiry_by_count if {
	fs := run([cp], [bucket([rule("keep3", [], [{"kind": "noncurrent_expire", "age_days": 0, "basis": "newer_versions"}])])])
	some f in fs
	f.id == "CKG-A003"
	contains(f.msg, "as soon as newer versions exist")
}

test_a001_one_day_is_singular if {
	fs := run([cp], [bucket([rule("one", [], [expire(1)])])])
	some f in fs
	f.id == "CKG-A001"
	endswith(f.msg, "after 1 day")
}

test_a003_abort_multipart_passes if {
	run([cp], [bucket([rule("mpu", [], [{"kind": "abort_multipart", "age_days": 1}])])]) == set()
}

# --- CKG-A004 Delta tables

test_a004_checkpoint_in_table_data_dir if {
	in_table := object.union(cp, {"delta_table": {"url": "s3://b/team", "rel": "q1"}})
	fs := run([in_table], [])
	ids(fs) == {"CKG-A004"}
}

test_a004_checkpoint_under_underscore_dir_passes if {
	ok := object.union(cp, {"delta_table": {"url": "s3://b/tbl", "rel": "_checkpoints/q1"}})
	run([ok], []) == set()
}

test_a004_change_data_is_not_hidden if {
	bad := object.union(cp, {"delta_table": {"url": "s3://b/tbl", "rel": "_change_data/q1"}})
	ids(run([bad], [])) == {"CKG-A004"}
}

test_a004_dot_dir_passes if {
	ok := object.union(cp, {"delta_table": {"url": "s3://b/tbl", "rel": ".ckpt/q1"}})
	run([ok], []) == set()
}

# --- CKG-A005 shared roots

test_a005_nested_checkpoints if {
	inner := {"url": "s3://b/team/q1/sub", "bucket": "b", "path": "team/q1/sub", "query_id": "q2"}
	fs := run([cp, inner], [])
	ids(fs) == {"CKG-A005"}
	some f in fs
	f.resource == "s3://b/team/q1/sub"
}

test_a005_siblings_pass if {
	other := {"url": "s3://b/team/q10", "bucket": "b", "path": "team/q10", "query_id": "q10"}
	run([cp, other], []) == set()
}

test_a005_writer_of_other_query if {
	shared := object.union(cp, {"writer_query_id": "q9"})
	ids(run([shared], [])) == {"CKG-A005"}
}

test_a005_known_query_equal_root if {
	fs := audit.findings with input as {"checkpoints": [cp], "buckets": []}
		with data.ckgate.queries as [{"query_id": "q2", "root": "s3://b/team/q1"}]
	ids(fs) == {"CKG-A005"}
}

test_a005_known_query_same_id_passes if {
	fs := audit.findings with input as {"checkpoints": [cp], "buckets": []}
		with data.ckgate.queries as [{"query_id": "q1", "root": "s3://b/team/q1"}]
	fs == set()
}

# --- CKG-A006 / CKG-A007 protections

test_a006_object_lock_warns if {
	b := object.union(bucket([]), {"object_lock": {"enabled": true, "mode": "GOVERNANCE", "days": 1}})
	fs := run([cp], [b])
	ids(fs) == {"CKG-A006"}
	some f in fs
	f.severity == "warn"
}

test_a007_versioning_off_warns if {
	b := object.union(bucket([]), {"versioning": "suspended"})
	ids(run([cp], [b])) == {"CKG-A007"}
}

test_a007_soft_delete_protects if {
	b := object.union(bucket([]), {"versioning": "off", "soft_delete_days": 7})
	run([cp], [b]) == set()
}

test_a007_unknown_protection_is_silent if {
	run([cp], [bucket([])]) == set()
}

test_a007_versioning_on_passes if {
	b := object.union(bucket([]), {"versioning": "enabled", "soft_delete_days": 0})
	run([cp], [b]) == set()
}

# --- CKG-A008 / CKG-A010 unknowns

test_a008_unreadable_rule_is_unknown if {
	r := object.union(rule("weird", [], []), {"unreadable": "unknown action"})
	fs := run([cp], [bucket([r])])
	ids(fs) == {"CKG-A008"}
	some f in fs
	f.severity == "unknown"
}

test_a008_unreadable_configuration_is_unknown if {
	b := object.union(bucket([]), {"error": "access denied"})
	fs := run([cp], [b])
	ids(fs) == {"CKG-A008"}
}

test_a010_unreadable_checkpoint_is_unknown if {
	bad := object.union(cp, {"error": "metadata: not JSON"})
	fs := run([bad], [])
	ids(fs) == {"CKG-A010"}
}

# --- exceptions

test_exception_silences_one_resource if {
	fs := audit.findings with input as {"outage_window_hours": 0, "checkpoints": [cp], "buckets": [bucket([rule("all", [], [expire(30)])])]}
		with data.ckgate.exceptions as {"CKG-A001": ["s3://b/team/q1"]}
	fs == set()
}

# --- CKG-A011 sink-owned-by-another-query

test_a011_sink_owned_by_another_query if {
	c := object.union(cp, {"sink": {"url": "s3://b/out", "owner_query_id": "q2", "owner_checkpoint": "s3://b/team/q2"}})
	fs := run([c], [])
	ids(fs) == {"CKG-A011"}
	some f in fs
	f.severity == "warn"
	contains(f.msg, "owned by query q2")
}

test_a011_own_sink_passes if {
	c := object.union(cp, {"sink": {"url": "s3://b/out", "owner_query_id": "q1", "owner_checkpoint": "s3://b/team/q1"}})
	run([c], []) == set()
}

test_a011_sink_without_owner_record_passes if {
	c := object.union(cp, {"sink": {"url": "s3://b/out"}})
	run([c], []) == set()
}

package ckgate.gateway_test

import data.ckgate.gateway

root := "s3://bucket/team/q1"

job := {"id": "svc-q1", "kind": "job"}

mutation(action, key, cond, principal) := {
	"action": action,
	"key": key,
	"path": concat("/", [root, key]),
	"location": concat("/", [root, key]),
	"root": root,
	"roots": [root],
	"scope": root,
	"cond": cond,
	"writer_session": principal.kind == "job",
	"principal": principal,
	"checkpoint": {"query_id": "q1"},
}

ids(d) := {v.id | some v in d.deny}

# --- CKG-P001 job-outside-root

test_p001_job_put_outside_root_denied if {
	inp := object.union(mutation("put", "x", "if-absent", job), {"path": "s3://bucket/team/q2/offsets/0", "location": "s3://bucket/team/q2/offsets/0"})
	d := gateway.decision with input as inp
	not d.allow
	ids(d) == {"CKG-P001"}
}

test_p001_job_put_sibling_prefix_denied if {
	# "team/q10" starts with "team/q1" as a string, not as a path
	inp := object.union(mutation("put", "x", "if-absent", job), {"path": "s3://bucket/team/q10/state/0", "location": "s3://bucket/team/q10/state/0"})
	d := gateway.decision with input as inp
	"CKG-P001" in ids(d)
}

test_p001_job_put_inside_root_allowed if {
	d := gateway.decision with input as mutation("put", "state/0/1/1.delta", "none", job)
	d.allow
	count(d.deny) == 0
}

# --- CKG-P002 job-deletes-log-entry

test_p002_job_deletes_offsets_denied if {
	d := gateway.decision with input as mutation("delete", "offsets/3", "none", job)
	ids(d) == {"CKG-P002"}
}

test_p002_job_deletes_commits_denied if {
	d := gateway.decision with input as mutation("delete", "commits/12", "if-match", job)
	ids(d) == {"CKG-P002"}
}

test_p002_job_deletes_sink_manifest_denied if {
	inp := object.union(mutation("delete", "x", "none", job), {"path": "s3://bucket/team/q1/out/_spark_metadata/9.compact", "location": "s3://bucket/team/q1/out/_spark_metadata/9.compact"})
	d := gateway.decision with input as inp
	"CKG-P002" in ids(d)
}

test_p002_job_deletes_own_garbage_allowed if {
	d := gateway.decision with input as mutation("delete", "state/0/0/7.delta.tmp", "none", job)
	d.allow
}

test_p002_job_deletes_offsets_temp_allowed if {
	# not a log entry: Spark's temp files beside the log
	d := gateway.decision with input as mutation("delete", "offsets/.3.tmp", "none", job)
	d.allow
}

# --- CKG-P003 log-entry-overwrite

test_p003_create_only_log_entry_allowed if {
	d := gateway.decision with input as mutation("put", "offsets/3", "if-absent", job)
	d.allow
}

test_p003_if_match_on_log_entry_denied if {
	d := gateway.decision with input as mutation("put", "commits/3", "if-match", job)
	ids(d) == {"CKG-P003"}
}

test_p003_unconditional_put_unknown_existence_denied if {
	d := gateway.decision with input as mutation("put", "offsets/3", "none", job)
	ids(d) == {"CKG-P003"}
}

test_p003_unconditional_put_existing_denied if {
	inp := object.union(mutation("put", "offsets/3", "none", job), {"exists": true})
	d := gateway.decision with input as inp
	ids(d) == {"CKG-P003"}
}

test_p003_unconditional_put_known_absent_allowed if {
	inp := object.union(mutation("put", "offsets/3", "none", job), {"exists": false})
	d := gateway.decision with input as inp
	d.allow
}

test_p003_applies_to_every_kind if {
	d := gateway.decision with input as mutation("put", "offsets/3", "if-match", {"id": "r", "kind": "retention"})
	"CKG-P003" in ids(d)
}

test_p003_writer_record_cas_allowed if {
	d := gateway.decision with input as mutation("put", "_ckgate/writer", "if-match", job)
	d.allow
}

# --- CKG-P004 delete-under-checkpoint

test_p004_housekeeping_delete_under_root_denied if {
	d := gateway.decision with input as mutation("delete", "state/0/0/1.delta", "none", {"id": "cron", "kind": "housekeeping"})
	ids(d) == {"CKG-P004"}
}

test_p004_unknown_kind_delete_denied if {
	d := gateway.decision with input as mutation("delete", "sources/0/0", "none", {"id": "x", "kind": "intern"})
	ids(d) == {"CKG-P004"}
}

test_p004_missing_principal_delete_denied if {
	inp := object.remove(mutation("delete", "metadata", "none", job), ["principal"])
	d := gateway.decision with input as inp
	ids(d) == {"CKG-P004"}
}

test_p004_housekeeping_delete_under_known_root_denied if {
	inp := object.union(mutation("delete", "x", "none", {"id": "cron", "kind": "housekeeping"}), {"root": "", "roots": [], "path": "s3://bucket/team/q7/commits/1", "location": "s3://bucket/team/q7/commits/1"})
	d := gateway.decision with input as inp with data.ckgate.queries as [{"query_id": "q7", "root": "s3://bucket/team/q7"}]
	ids(d) == {"CKG-P004"}
}

test_p004_housekeeping_delete_outside_roots_allowed if {
	inp := object.union(mutation("delete", "x", "none", {"id": "cron", "kind": "housekeeping"}), {"path": "s3://bucket/tmp/old.csv", "location": "s3://bucket/tmp/old.csv"})
	d := gateway.decision with input as inp
	d.allow
}

test_p004_housekeeping_put_allowed if {
	d := gateway.decision with input as mutation("put", "notes.txt", "if-absent", {"id": "cron", "kind": "housekeeping"})
	d.allow
}

# --- CKG-P009 replace-under-checkpoint

test_p009_housekeeping_replaces_under_root_denied if {
	d := gateway.decision with input as mutation("put", "notes.txt", "none", {"id": "cron", "kind": "housekeeping"})
	ids(d) == {"CKG-P009"}
}

test_p009_housekeeping_replaces_writer_record_denied if {
	d := gateway.decision with input as mutation("put", "_ckgate/writer", "if-match", {"id": "cron", "kind": "housekeeping"})
	ids(d) == {"CKG-P009"}
}

test_p009_housekeeping_creates_state_denied if {
	d := gateway.decision with input as mutation("put", "state/0/0/9.delta", "if-absent", {"id": "cron", "kind": "housekeeping"})
	ids(d) == {"CKG-P009"}
}

test_p009_job_session_rewrites_state_allowed if {
	d := gateway.decision with input as mutation("put", "state/0/0/9.delta", "none", job)
	d.allow
}

test_p009_job_outside_session_rewrites_state_denied if {
	inp := object.union(mutation("put", "state/0/0/9.delta", "none", job), {"writer_session": false})
	d := gateway.decision with input as inp
	ids(d) == {"CKG-P009"}
}

test_p009_outside_roots_allowed if {
	inp := object.union(mutation("put", "x", "none", {"id": "cron", "kind": "housekeeping"}), {"roots": [], "location": "s3://bucket/tmp/x", "path": "s3://bucket/tmp/x"})
	d := gateway.decision with input as inp
	d.allow
}

# --- every root above the location protects it

outer := "s3://bucket/team"

test_planted_metadata_does_not_move_the_root if {
	# a metadata planted in offsets/ makes offsets/ a root too; offsets/2
	# is still a log entry of the outer root
	inp := object.union(mutation("put", "offsets/2", "none", {"id": "cron", "kind": "housekeeping"}), {"roots": [root, "s3://bucket/team/q1/offsets"], "root": "s3://bucket/team/q1/offsets"})
	d := gateway.decision with input as inp
	"CKG-P003" in ids(d)
	"CKG-P006" in ids(d)
}

test_delete_under_outer_root_denied if {
	inp := object.union(mutation("delete", "x", "none", {"id": "cron", "kind": "housekeeping"}), {"roots": [outer], "root": outer, "location": "s3://bucket/team/tmp/x", "path": "s3://bucket/team/tmp/x"})
	d := gateway.decision with input as inp
	ids(d) == {"CKG-P004"}
}

test_log_entry_of_outer_root_protected if {
	inp := object.union(mutation("delete", "x", "none", job), {"roots": [outer, root], "location": "s3://bucket/team/commits/4", "path": "s3://bucket/team/commits/4"})
	d := gateway.decision with input as inp
	"CKG-P002" in ids(d)
}

# --- CKG-P006 log-entry-creator

test_p006_housekeeping_creates_commit_denied if {
	d := gateway.decision with input as mutation("put", "commits/2", "if-absent", {"id": "cron", "kind": "housekeeping"})
	ids(d) == {"CKG-P006"}
}

test_p006_retention_creates_offsets_denied if {
	d := gateway.decision with input as mutation("put", "offsets/9", "if-absent", {"id": "r", "kind": "retention"})
	ids(d) == {"CKG-P006"}
}

test_p006_job_outside_writer_session_denied if {
	inp := object.union(mutation("put", "commits/2", "if-absent", job), {"writer_session": false})
	d := gateway.decision with input as inp
	ids(d) == {"CKG-P006"}
}

test_p006_job_session_creates_source_log_allowed if {
	d := gateway.decision with input as mutation("put", "sources/0/4", "if-absent", job)
	d.allow
}

test_p006_housekeeping_creates_metadata_of_root_denied if {
	d := gateway.decision with input as mutation("put", "metadata", "if-absent", {"id": "cron", "kind": "housekeeping"})
	"CKG-P006" in ids(d)
}

test_p006_admin_breaks_glass if {
	d := gateway.decision with input as mutation("put", "commits/2", "if-absent", admin("INC-7: restore commit"))
	d.allow
	d.break_glass
}

# --- CKG-P007 nested-root-metadata

test_p007_metadata_inside_root_denied if {
	d := gateway.decision with input as mutation("put", "offsets/metadata", "if-absent", {"id": "cron", "kind": "housekeeping"})
	ids(d) == {"CKG-P007"}
}

test_p007_job_metadata_inside_own_root_denied if {
	d := gateway.decision with input as mutation("put", "sub/metadata", "if-absent", job)
	ids(d) == {"CKG-P007"}
}

test_p007_operator_metadata_allowed if {
	d := gateway.decision with input as mutation("put", "state/0/_metadata/metadata", "if-absent", job)
	d.allow
}

# --- CKG-P008 archive-create-only

archiver := {"id": "ckgate-archive", "kind": "archive"}

test_p008_archive_creates_log_entry if {
	d := gateway.decision with input as mutation("put", "offsets/3", "if-absent", archiver)
	d.allow
}

test_p008_archive_overwrite_denied if {
	d := gateway.decision with input as mutation("put", "state/0/1/1.delta", "none", archiver)
	"CKG-P008" in ids(d)
}

test_p008_archive_delete_denied if {
	d := gateway.decision with input as mutation("delete", "notes.txt", "none", archiver)
	"CKG-P008" in ids(d)
}

test_p008_archive_outside_scope_denied if {
	inp := object.union(mutation("put", "x", "if-absent", archiver), {"location": "s3://bucket/team/q2/x", "path": "s3://bucket/team/q2/x", "roots": []})
	d := gateway.decision with input as inp
	ids(d) == {"CKG-P008"}
}

# --- CKG-P005 retention-outside-plan

retention := {"id": "svc-retention", "kind": "retention"}

plan := {"id": "plan-1", "obsolete": {"offsets/1": "before retain_from 5", "state/0/0/1.delta": "superseded by snapshot 4"}}

test_p005_retention_delete_in_plan_allowed if {
	inp := object.union(mutation("delete", "offsets/1", "none", retention), {"plan": plan})
	d := gateway.decision with input as inp
	d.allow
}

test_p005_retention_delete_not_in_plan_denied if {
	inp := object.union(mutation("delete", "offsets/7", "none", retention), {"plan": plan})
	d := gateway.decision with input as inp
	ids(d) == {"CKG-P005"}
}

test_p005_retention_delete_without_plan_denied if {
	d := gateway.decision with input as mutation("delete", "offsets/1", "none", retention)
	ids(d) == {"CKG-P005"}
}

test_p005_retention_plan_from_data_allowed if {
	d := gateway.decision with input as mutation("delete", "state/0/0/1.delta", "none", retention)
		with data.ckgate.retention.plans as {root: plan}
	d.allow
}

test_p005_retention_plan_of_other_root_denied if {
	d := gateway.decision with input as mutation("delete", "offsets/1", "none", retention)
		with data.ckgate.retention.plans as {"s3://bucket/team/q2": plan}
	ids(d) == {"CKG-P005"}
}

test_p005_retention_plan_of_inner_root_denied if {
	# a plan for a root planted in offsets/ does not reach the outer root's log
	inner := "s3://bucket/team/q1/offsets"
	inp := object.union(mutation("delete", "2", "none", retention), {
		"scope": inner, "roots": [root, inner], "root": inner,
		"location": "s3://bucket/team/q1/offsets/2", "path": "s3://bucket/team/q1/offsets/2",
		"plan": {"id": "p", "obsolete": {"2": "junk"}},
	})
	d := gateway.decision with input as inp
	ids(d) == {"CKG-P005"}
}

# --- break glass

admin(reason) := {"id": "alice", "kind": "admin", "reason": reason}

test_admin_without_reason_denied if {
	d := gateway.decision with input as mutation("delete", "offsets/3", "none", {"id": "alice", "kind": "admin"})
	ids(d) == {"CKG-P004"}
	not d.break_glass
}

test_admin_blank_reason_denied if {
	d := gateway.decision with input as mutation("delete", "offsets/3", "none", admin("   "))
	ids(d) == {"CKG-P004"}
}

test_admin_with_reason_breaks_glass if {
	d := gateway.decision with input as mutation("delete", "offsets/3", "none", admin("INC-42: corrupt offsets/3"))
	d.allow
	d.break_glass
	d.reason == "INC-42: corrupt offsets/3"
	{v.id | some v in d.overridden} == {"CKG-P004"}
}

test_admin_reason_without_violation_is_no_break_glass if {
	d := gateway.decision with input as mutation("put", "notes.txt", "if-absent", admin("just because"))
	d.allow
	not d.break_glass
	count(d.overridden) == 0
}

test_reason_of_non_admin_is_ignored if {
	d := gateway.decision with input as mutation("delete", "offsets/3", "none", {"id": "cron", "kind": "housekeeping", "reason": "please"})
	not d.allow
	not d.break_glass
}

# --- user rules join the decision

test_user_rule_denies if {
	d := gateway.decision with input as mutation("put", "state/x", "none", job)
		with data.ckgate.gateway.rules.mine.deny as {{"id": "MY-1", "name": "mine", "severity": "deny", "msg": "no"}}
	ids(d) == {"MY-1"}
}

test_user_warning_does_not_deny if {
	d := gateway.decision with input as mutation("put", "state/x", "none", job)
		with data.ckgate.gateway.rules.mine.deny as {{"id": "MY-2", "name": "mine", "severity": "warn", "msg": "hm"}}
	d.allow
}

# --- a file sink's owner log (_ckgate/sink-owner/N): create-only, never deleted

sink := "s3://bucket/out/sessions"

sink_put(action, key, cond, principal) := object.union(mutation(action, key, cond, principal), {
	"path": concat("/", [sink, key]), "location": concat("/", [sink, key]),
	"root": "", "roots": [], "scope": sink,
})

test_sink_owner_create_allowed if {
	d := gateway.decision with input as sink_put("put", "_ckgate/sink-owner/0", "if-absent", job)
	d.allow
}

test_sink_owner_overwrite_denied if {
	d := gateway.decision with input as sink_put("put", "_ckgate/sink-owner/0", "none", job)
	ids(d) == {"CKG-P003"}
}

test_sink_owner_delete_denied if {
	d := gateway.decision with input as sink_put("delete", "_ckgate/sink-owner/3", "none", job)
	ids(d) == {"CKG-P002"}
}

test_sink_owner_created_outside_writer_session_denied if {
	inp := object.union(sink_put("put", "_ckgate/sink-owner/1", "if-absent", job), {"writer_session": false})
	d := gateway.decision with input as inp
	"CKG-P006" in ids(d)
}

# --- CKG-P013 sink-adoption

adopt(principal, query_id) := {
	"action": "adopt_sink",
	"location": sink,
	"path": sink,
	"root": root,
	"principal": principal,
	"checkpoint": {"query_id": query_id},
	"sink": {"owner": {"query_id": "q0", "checkpoint": "s3://bucket/team/q0"}, "latest_batch": 9, "handover": "adopt-sink"},
}

test_p013_job_adopts_sink_allowed if {
	d := gateway.decision with input as adopt(job, "q1")
	d.allow
}

test_p013_housekeeping_adopts_sink_denied if {
	d := gateway.decision with input as adopt({"id": "cron", "kind": "housekeeping"}, "q1")
	ids(d) == {"CKG-P013"}
}

test_p013_adopt_without_query_id_denied if {
	d := gateway.decision with input as adopt(job, "")
	ids(d) == {"CKG-P013"}
}

# --- conftest-style rules: string and object messages, warn

test_user_string_deny_denies if {
	d := gateway.decision with input as mutation("put", "state/x", "none", job)
		with data.ckgate.gateway.rules.mine.deny as {"no state today"}
	not d.allow
	d.deny == {{"id": "mine", "name": "mine", "severity": "deny", "msg": "no state today"}}
}

test_user_object_deny_is_named_by_its_code if {
	d := gateway.decision with input as mutation("put", "state/x", "none", job)
		with data.ckgate.gateway.rules.mine.deny as {{"msg": "no", "code": "TEAM-1", "details": {"k": 1}}}
	not d.allow
	ids(d) == {"TEAM-1"}
}

test_user_warn_allows_and_is_reported if {
	d := gateway.decision with input as mutation("put", "state/x", "none", job)
		with data.ckgate.gateway.rules.mine.warn as {"hm"}
	d.allow
	count(d.deny) == 0
	d.warn == {{"id": "mine", "name": "mine", "severity": "warn", "msg": "hm"}}
}

test_user_warn_is_no_break_glass if {
	d := gateway.decision with input as mutation("put", "notes.txt", "if-absent", admin("INC-1"))
		with data.ckgate.gateway.rules.mine.warn as {"hm"}
	d.allow
	not d.break_glass
	count(d.warn) == 1
}

# --- CKG-P002: a job's own purge (input.purge) is allowed, nothing a restart needs

purge(key, facts) := object.union(mutation("delete", key, "none", job), {"purge": facts})

test_p002_job_purges_offsets_below_floor_allowed if {
	d := gateway.decision with input as purge("offsets/3", {"log": "offsets", "batch": 3, "latest_offsets": 20, "latest_commit": 19, "restart_floor": 19})
	d.allow
}

test_p002_job_deletes_offsets_at_floor_denied if {
	d := gateway.decision with input as purge("offsets/19", {"log": "offsets", "batch": 19, "latest_offsets": 20, "latest_commit": 19, "restart_floor": 19})
	ids(d) == {"CKG-P002"}
	some v in d.deny
	contains(v.msg, "restart floor 19")
}

test_p002_job_deletes_without_floor_denied if {
	d := gateway.decision with input as purge("offsets/3", {"log": "offsets", "batch": 3, "latest_offsets": 20})
	ids(d) == {"CKG-P002"}
}

test_p002_job_purges_compacted_source_allowed if {
	d := gateway.decision with input as purge("sources/0/4", {"log": "sources", "batch": 4, "latest_compact": 9})
	d.allow
}

test_p002_job_deletes_uncompacted_source_denied if {
	d := gateway.decision with input as purge("sources/0/12", {"log": "sources", "batch": 12, "latest_compact": 9})
	ids(d) == {"CKG-P002"}
}

test_p002_purge_facts_never_cover_metadata if {
	d := gateway.decision with input as purge("metadata", {"log": "offsets", "batch": 0, "restart_floor": 19})
	ids(d) == {"CKG-P002"}
}

test_p002_housekeeping_purge_still_denied if {
	inp := object.union(mutation("delete", "offsets/3", "none", {"id": "cron", "kind": "housekeeping"}), {"purge": {"log": "offsets", "batch": 3, "restart_floor": 19}})
	d := gateway.decision with input as inp
	"CKG-P004" in ids(d)
}

# --- CKG-P014 root-owner

test_p014_owner_writes_allowed if {
	d := gateway.decision with input as object.union(mutation("put", "state/0/0/1.delta", "none", job), {"root_owner": "svc-q1"})
	d.allow
}

test_p014_other_job_denied if {
	d := gateway.decision with input as object.union(mutation("put", "state/0/0/1.delta", "none", job), {"root_owner": "svc-q2"})
	ids(d) == {"CKG-P014"}
	some v in d.deny
	contains(v.msg, "owned by svc-q2")
}

test_p014_other_job_delete_denied if {
	d := gateway.decision with input as object.union(mutation("delete", "offsets/.3.tmp", "none", job), {"root_owner": "svc-q2"})
	ids(d) == {"CKG-P014"}
}

test_p014_owner_record_never_written if {
	inp := object.union(mutation("put", "_ckgate/root-owner", "none", job), {"root_owner": "svc-q1"})
	d := gateway.decision with input as inp
	ids(d) == {"CKG-P014"}
}

test_p014_no_owner_no_refusal if {
	d := gateway.decision with input as mutation("put", "state/0/0/1.delta", "none", job)
	d.allow
}

# --- CKG-P015 zombie-writer

test_p015_fenced_process_denied if {
	inp := object.union(mutation("put", "state/0/0/9.delta", "none", job), {"process": {"id": "old", "fenced_by": "new", "fenced_at_batch": 8}})
	d := gateway.decision with input as inp
	ids(d) == {"CKG-P015"}
	some v in d.deny
	contains(v.msg, "committed over by process new at batch 8")
}

test_p015_current_process_allowed if {
	d := gateway.decision with input as object.union(mutation("put", "state/0/0/9.delta", "none", job), {"process": {"id": "new"}})
	d.allow
}

test_p014_committer_record_never_written if {
	d := gateway.decision with input as mutation("put", "_ckgate/committer", "none", job)
	ids(d) == {"CKG-P014"}
}

package ckgate.audit

import data.ckgate.lib

# Delta tables read by a checkpoint: the checkpoint records the table id
# (reservoirId) of each Delta source, input.delta_tables the tables named.
reads(cp, t) if t.id in object.get(cp, "delta_sources", [])

findings contains lib.finding("CKG-A012", t.url, msg) if {
	some t in input.delta_tables
	not t.error
	some cp in input.checkpoints
	reads(cp, t)
	t.deleted_file_retention_hours < input.outage_window_hours
	msg := sprintf("Delta table %s (id %s), read by checkpoint %s, keeps removed data files %v hours (delta.deletedFileRetentionDuration), less than the %d-hour outage window: after VACUUM a stream stopped that long misses files it still reads", [t.url, t.id, cp.url, t.deleted_file_retention_hours, input.outage_window_hours])
}

findings contains lib.finding("CKG-A012", t.url, msg) if {
	some t in input.delta_tables
	not t.error
	t.log_cleanup
	some cp in input.checkpoints
	reads(cp, t)
	t.log_retention_hours < input.outage_window_hours
	msg := sprintf("Delta table %s (id %s), read by checkpoint %s, keeps its log %v hours (delta.logRetentionDuration), less than the %d-hour outage window: log cleanup removes the versions a stream stopped that long resumes from", [t.url, t.id, cp.url, t.log_retention_hours, input.outage_window_hours])
}

findings contains lib.finding("CKG-A013", t.url, msg) if {
	some t in input.delta_tables
	not t.error
	not t.log_cleanup
	t.growing
	some cp in input.checkpoints
	reads(cp, t)
	msg := sprintf("Delta table %s (id %s), read by checkpoint %s, has log cleanup disabled (delta.enableExpiredLogCleanup=false) and is written to: its log (%d commits) grows without bound", [t.url, t.id, cp.url, t.commits])
}

findings contains lib.finding("CKG-A014", t.url, msg) if {
	some t in input.delta_tables
	t.error
	msg := sprintf("Delta table %s could not be read: %s", [t.url, t.error])
}

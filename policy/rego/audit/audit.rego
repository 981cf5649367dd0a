# The audit of checkpoints against their storage: every package under
# ckgate.audit.rules contributes a set `findings` ({id, name, severity,
# resource, msg}); users add their own packages there.
#
# Input (built by policy.Audit):
#
#   {"outage_window_hours": 72,
#    "checkpoints": [{"url", "bucket", "path", "query_id", "writer_query_id",
#                     "entries": ["metadata", "offsets/", ...],
#                     "delta_table": {"url", "rel"}, "error"}],
#    "buckets": [{"bucket", "provider", "source", "versioning",
#                 "soft_delete_days", "object_lock": {...}, "error",
#                 "rules": [{"id", "enabled", "unreadable",
#                            "scope": {"container", "prefixes", "suffixes",
#                                      "tags", "min_size", "max_size",
#                                      "storage_classes"},
#                            "actions": [{"kind", "age_days", "date",
#                                         "storage_class"}]}]}],
#    "known_queries": [{"query_id", "root"}]}
#
# data.ckgate.exceptions[RULE_ID] lists resources a rule does not apply to.
package ckgate.audit

findings contains f if {
	some f in data.ckgate.audit.rules[_].findings
	not excepted(f)
}

excepted(f) if f.resource in data.ckgate.exceptions[f.id]

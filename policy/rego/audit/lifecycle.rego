# Lifecycle rules against checkpoints.
package ckgate.audit.rules.lifecycle

import data.ckgate.audit.coverage
import data.ckgate.lib

findings contains lib.finding("CKG-A001", h.cp.url, msg) if {
	some h in coverage.hits
	h.action.kind == "expire"
	msg := sprintf("lifecycle rule %s expires files of checkpoint %s after %s", [coverage.rule_name(h.bucket, h.rule), h.cp.url, coverage.when(h.action)])
}

findings contains lib.finding("CKG-A002", h.cp.url, msg) if {
	some h in coverage.hits
	h.action.kind == "archive"
	msg := sprintf("lifecycle rule %s moves files of checkpoint %s to the offline tier %s after %s: reads fail until they are restored", [coverage.rule_name(h.bucket, h.rule), h.cp.url, object.get(h.action, "storage_class", "archive"), coverage.when(h.action)])
}

findings contains lib.finding("CKG-A009", h.cp.url, msg) if {
	some h in coverage.hits
	h.action.kind == "cold"
	msg := sprintf("lifecycle rule %s moves files of checkpoint %s to the cold tier %s after %s: slower reads, retrieval fees and minimum storage charges", [coverage.rule_name(h.bucket, h.rule), h.cp.url, object.get(h.action, "storage_class", "cold"), coverage.when(h.action)])
}

# Actions that lose or hide checkpoint data.
destructive := {"expire", "archive", "noncurrent_expire"}

findings contains lib.finding("CKG-A003", h.cp.url, msg) if {
	some h in coverage.hits
	h.action.kind in destructive
	window := object.get(input, "outage_window_hours", 0)
	object.get(h.action, "age_days", 0) * 24 < window
	msg := sprintf("lifecycle rule %s (%s) acts on checkpoint %s after %s, sooner than the outage window of %d hours: a query stopped that long loses its checkpoint", [coverage.rule_name(h.bucket, h.rule), h.action.kind, h.cp.url, coverage.when(h.action), window])
}

findings contains lib.finding("CKG-A008", resource, msg) if {
	some b in input.buckets
	some r in b.rules
	object.get(r, "unreadable", "") != ""
	resource := bucket_resource(b)
	msg := sprintf("could not read lifecycle rule %s: %s; its effect on checkpoints is unknown", [coverage.rule_name(b, r), r.unreadable])
}

findings contains lib.finding("CKG-A008", resource, msg) if {
	some b in input.buckets
	object.get(b, "error", "") != ""
	resource := bucket_resource(b)
	msg := sprintf("could not read the lifecycle configuration of %s: %s; its effect on checkpoints is unknown", [resource, b.error])
}

bucket_resource(b) := b.bucket if object.get(b, "bucket", "") != ""

else := object.get(b, "source", "")

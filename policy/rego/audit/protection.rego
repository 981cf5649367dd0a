# Bucket protections against checkpoints: object lock and undo (versioning,
# soft delete).
package ckgate.audit.rules.protection

import data.ckgate.audit.coverage
import data.ckgate.lib

findings contains lib.finding("CKG-A006", cp.url, msg) if {
	some b in input.buckets
	some cp in input.checkpoints
	coverage.applies(b, cp)
	lock := b.object_lock
	lock.enabled
	msg := sprintf("%s (%s) covers checkpoint %s: Spark and ckgate must delete their own files (retention, compaction) and those deletes fail while objects are locked", [lock_text(lock), object.get(b, "source", ""), cp.url])
}

lock_text(lock) := sprintf("object lock %s for %d days", [object.get(lock, "mode", ""), object.get(lock, "days", 0)]) if object.get(lock, "days", 0) > 0

else := sprintf("object lock %s", [object.get(lock, "mode", "")])

protected(b) if b.versioning == "enabled"

protected(b) if b.soft_delete_days > 0

# known: the configuration says something about versioning or soft delete.
known(b) if object.get(b, "versioning", "") != ""

known(b) if is_number(b.soft_delete_days)

findings contains lib.finding("CKG-A007", cp.url, msg) if {
	some b in input.buckets
	some cp in input.checkpoints
	coverage.applies(b, cp)
	known(b)
	not protected(b)
	msg := sprintf("neither versioning (%s) nor soft delete (%s) protects checkpoint %s (%s): a mistaken delete cannot be undone", [state(object.get(b, "versioning", "")), soft_state(b), cp.url, object.get(b, "source", "")])
}

state(s) := "unknown" if s == ""

else := s

soft_state(b) := sprintf("%d days", [b.soft_delete_days]) if is_number(b.soft_delete_days)

else := "unknown"

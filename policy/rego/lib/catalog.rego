# The catalogue of ckgate's default rules. An id never changes meaning: a
# retired rule keeps its id reserved. Severities: "deny" refuses (gateway) or
# fails the audit, "warn" is reported without failing, "unknown" means the
# auditor could not tell and never counts as a pass.
package ckgate.catalog

rules := {
	"CKG-P000": {
		"name": "fail-closed",
		"severity": "deny",
		"scope": "gateway",
		"description": "The policy could not be evaluated (error or undefined decision): the mutation is refused.",
	},
	"CKG-P001": {
		"name": "job-outside-root",
		"severity": "deny",
		"scope": "gateway",
		"description": "A job principal writes and deletes only inside its own checkpoint root.",
	},
	"CKG-P002": {
		"name": "job-deletes-log-entry",
		"severity": "deny",
		"scope": "gateway",
		"description": "A job principal deletes no log entry (offsets/N, commits/N, sources/S/N, metadata, _spark_metadata/N, a file sink's _ckgate/sink-owner/N) that a restart needs: only its own purge, of offsets/N and commits/N below the restart floor (min(latest offsets - 1, latest commit)) and of sources/S/N and _spark_metadata/N below the newest N.compact of their log.",
	},
	"CKG-P003": {
		"name": "log-entry-overwrite",
		"severity": "deny",
		"scope": "gateway",
		"description": "No principal overwrites a log entry: a put with condition none or if-match on an existing offsets/N, commits/N, sources/S/N, metadata or _spark_metadata/N of any checkpoint root above it, or a file sink's _ckgate/sink-owner/N.",
	},
	"CKG-P004": {
		"name": "delete-under-checkpoint",
		"severity": "deny",
		"scope": "gateway",
		"description": "Housekeeping, admin (without break glass) and unknown principals delete nothing under a checkpoint root.",
	},
	"CKG-P005": {
		"name": "retention-outside-plan",
		"severity": "deny",
		"scope": "gateway",
		"description": "A retention principal deletes only keys that the supplied retention plan marks obsolete.",
	},
	"CKG-P006": {
		"name": "log-entry-creator",
		"severity": "deny",
		"scope": "gateway",
		"description": "Only the owning query's writer session (or an archive copier into a new root) creates log entries: offsets/N, commits/N, sources/S/N, metadata, _spark_metadata/N.",
	},
	"CKG-P007": {
		"name": "nested-root-metadata",
		"severity": "deny",
		"scope": "gateway",
		"description": "No principal creates a metadata file inside a checkpoint's tree (other than the root's own and state/<op>/_metadata/metadata): it would start a checkpoint inside a checkpoint.",
	},
	"CKG-P008": {
		"name": "archive-create-only",
		"severity": "deny",
		"scope": "gateway",
		"description": "An archive principal only creates (if-absent) inside its destination; it never deletes or overwrites.",
	},
	"CKG-P009": {
		"name": "replace-under-checkpoint",
		"severity": "deny",
		"scope": "gateway",
		"description": "Under a checkpoint root only the owning query's writer session replaces files (writer record, plan, state) and writes state; everyone else only creates new files there.",
	},
	"CKG-P010": {
		"name": "shared-checkpoint-metadata",
		"severity": "deny",
		"scope": "open",
		"description": "A checkpoint whose metadata holds another query id is not opened (shared checkpoint).",
	},
	"CKG-P011": {
		"name": "shared-checkpoint-root",
		"severity": "deny",
		"scope": "open",
		"description": "A checkpoint root equal to, inside or above another known query's root is not opened.",
	},
	"CKG-P012": {
		"name": "open-without-query-id",
		"severity": "deny",
		"scope": "open",
		"description": "Opening a checkpoint states the query id it is opened for.",
	},
	"CKG-P014": {
		"name": "root-owner",
		"severity": "deny",
		"scope": "gateway",
		"description": "Behind a shared front door (ckgate serve), the first job principal to write a checkpoint root's metadata owns the root (recorded create-only in <root>/_ckgate/root-owner): every other job principal's writes under it are refused, and nobody writes or deletes the record itself (nor the root's committer record).",
	},
	"CKG-P015": {
		"name": "zombie-writer",
		"severity": "deny",
		"scope": "gateway",
		"description": "Behind a shared front door, a driver process that a newer process has committed over (the root's _ckgate/committer record; processes named by S3A's audit referrer) writes and deletes nothing under the root.",
	},
	"CKG-P013": {
		"name": "sink-adoption",
		"severity": "deny",
		"scope": "gateway",
		"description": "Only a job principal, for a query with an id, takes over a file sink that another query or Spark wrote (run --adopt-sink, or the new root of the owner's fresh start).",
	},
	"CKG-A001": {
		"name": "lifecycle-expires-checkpoint",
		"severity": "deny",
		"scope": "audit",
		"description": "An enabled lifecycle expiration whose scope covers checkpoint files.",
	},
	"CKG-A002": {
		"name": "lifecycle-archives-checkpoint",
		"severity": "deny",
		"scope": "audit",
		"description": "An enabled transition to an offline archive tier (S3 Glacier Flexible Retrieval / Deep Archive, Azure Archive) covering checkpoint files: reads fail until restored.",
	},
	"CKG-A003": {
		"name": "lifecycle-shorter-than-outage-window",
		"severity": "deny",
		"scope": "audit",
		"description": "A lifecycle rule that deletes or archives checkpoint data (current or noncurrent versions) sooner than the outage window.",
	},
	"CKG-A004": {
		"name": "checkpoint-in-delta-table",
		"severity": "deny",
		"scope": "audit",
		"description": "A checkpoint inside a Delta table directory, not under a directory VACUUM skips (a name starting with '_' or '.'): VACUUM deletes its files.",
	},
	"CKG-A005": {
		"name": "shared-checkpoint-root",
		"severity": "deny",
		"scope": "audit",
		"description": "Two queries with equal or nested checkpoint roots.",
	},
	"CKG-A006": {
		"name": "object-lock",
		"severity": "warn",
		"scope": "audit",
		"description": "Object lock or a retention lock covers a checkpoint: Spark and ckgate must delete their own files (retention, compaction).",
	},
	"CKG-A007": {
		"name": "no-versioning-or-soft-delete",
		"severity": "warn",
		"scope": "audit",
		"description": "Neither versioning nor soft delete protects the checkpoint's bucket: a mistaken delete cannot be undone.",
	},
	"CKG-A008": {
		"name": "lifecycle-unreadable",
		"severity": "unknown",
		"scope": "audit",
		"description": "A lifecycle rule or configuration the auditor could not read: its effect on checkpoints is unknown, never a pass.",
	},
	"CKG-A009": {
		"name": "lifecycle-cold-tier",
		"severity": "warn",
		"scope": "audit",
		"description": "An enabled transition to an online cold tier (S3 IA / Glacier Instant Retrieval, GCS Nearline/Coldline/Archive, Azure Cool/Cold) covering checkpoint files: slower, retrieval fees, minimum storage charges.",
	},
	"CKG-A010": {
		"name": "checkpoint-unreadable",
		"severity": "unknown",
		"scope": "audit",
		"description": "A checkpoint whose metadata could not be read: the audit cannot tell which query owns it.",
	},
	"CKG-A011": {
		"name": "sink-owned-by-another-query",
		"severity": "warn",
		"scope": "audit",
		"description": "A checkpoint's file sink (the one its ckgate plan names) is owned by another query (_ckgate/sink-owner/ in the sink): a run of the checkpoint is refused on it.",
	},
	"CKG-A012": {
		"name": "delta-retention-shorter-than-outage-window",
		"severity": "deny",
		"scope": "audit",
		"description": "A Delta table a checkpoint reads (matched by table id) whose delta.deletedFileRetentionDuration (VACUUM) or delta.logRetentionDuration (log cleanup) is shorter than the outage window: a stream stopped that long cannot resume.",
	},
	"CKG-A013": {
		"name": "delta-log-cleanup-disabled",
		"severity": "warn",
		"scope": "audit",
		"description": "A Delta table a checkpoint reads has log cleanup disabled (delta.enableExpiredLogCleanup=false) and is written to: its log grows without bound.",
	},
	"CKG-A014": {
		"name": "delta-table-unreadable",
		"severity": "unknown",
		"scope": "audit",
		"description": "A Delta table named for the audit could not be read: its retention is unknown, never a pass.",
	},
}

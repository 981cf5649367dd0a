// Package lifecycle holds what happens to a checkpoint over its life,
// beyond the query that writes it: which of its files can never be needed
// again (RetentionPlan, ApplyRetention), whether its sources can still replay what it will
// resume from (Gap), and keeping an old checkpoint as a verified copy
// before a query starts afresh on a new root (Archive, FreshStart).
//
// # Retention
//
// RetentionPlan is a pure function, modelled on restic's forget: from a Listing (every
// key of the checkpoint, plus what ReadListing decoded: the commits of the retained
// batches, the rebuild chains of their state files and the SST lists of the
// RocksDB zips it keeps) and a RetentionPolicy it returns every key with a decision,
// keep or remove, and a reason. The rules follow Spark's own cleanup
// (minBatchesToRetain):
//
//   - offsets/ and commits/: the latest RetentionPolicy.MinBatches batches are kept,
//     and so are the latest committed batch, an in-flight batch (offsets
//     without a commit), offsets/L-1, and with RetentionPolicy.RetainFor every batch
//     whose log entry is younger than that. R, the oldest retained batch,
//     is the smallest of those bounds; older entries go.
//   - state (no unique ids: HDFS and RocksDB providers): per store partition,
//     the newest snapshot (or zip) at or below version R and every file after
//     it are kept; older files go.
//   - state with unique ids (ckgate's engine, Spark's checkpoint format v2):
//     the files commits/R-1 … commits/C name, and the files they are built
//     from (ckgate: the base each file names; Spark: a changelog's lineage),
//     are kept; so is every file newer than the latest commit (an in-flight
//     attempt). Other unique-id files no retained commit needs go. When a
//     commit or a chain could not be decoded, the whole store directory is
//     kept.
//   - RocksDB SSTs/ and logs/ files: those a kept zip's metadata names are
//     kept; one no kept zip names goes when it is older than the oldest kept
//     zip of its directory (a newer one may belong to a version being
//     written). When a kept zip cannot be read, every SST and log file of its
//     directory is kept and the reason names the zip and the error.
//   - compacted logs (sources/<i>/, <output>/_spark_metadata/), each by its
//     own ids as Spark's deleteExpiredLog does: the newest compaction at or
//     below E (the latest entry minus MinBatches plus one, lowered to the
//     oldest entry younger than RetainFor) and every entry after it are
//     kept, so readers always find the latest compaction and what follows;
//     earlier entries go. Logs that never compacted are kept.
//   - _ckgate/: the writer record, plan, start point and migration records
//     are kept; the effect ledger of a batch older than R and older than
//     RetentionPolicy.LogRetention goes.
//   - checksum sidecars (.name.crc, name.crc) follow their file; a sidecar
//     without its file goes. Everything else (metadata, operator metadata,
//     schemas, names outside the layout) is kept.
//
// A file sink's output directory is planned on its own (ReadSinkListing, then RetentionPlan
// of a Listing with Sink set; `ckgate retention --sink URL`): only its
// manifest log _spark_metadata/ is a candidate, by the compacted-log rule;
// its data files are never removed.
//
// ApplyRetention deletes the removed keys through a store (normally wrapped by the
// policy authorizer as principal kind "retention" with the plan, so anything
// not planned is refused) in a safe order (SortSafe): sidecars before their
// files, state oldest version first, RocksDB zips before the SSTs they name,
// then compacted logs, commits and offsets, oldest first. A failure part-way
// leaves a checkpoint (and a sink log) that restarts and reads; applying a
// fresh plan again finishes the job.
//
// # Gap
//
// Gap compares where a checkpoint resumes with what its sources still
// hold. The resume point of a source is its end offset in the latest
// committed batch C (offsets/C), or its initial offsets (sources/<i>/0)
// when no batch is committed; batches after C (in flight) are re-read from
// there up to their own end offsets. Kafka partitions are checked with
// kadm (earliest and latest offsets, topic ids, the cluster id):
//
//	ok                 the records from the resume offset on are all there
//	gap                Expired records between the resume offset and the
//	                   earliest retained one were deleted by retention
//	ahead              the resume offset (or an in-flight end offset) is
//	                   beyond the end of the partition: the topic was
//	                   truncated or re-created
//	identity-changed   the topic id (or cluster id) differs from the one in
//	                   _ckgate/plan.json: the topic was deleted and re-created
//	missing            the topic or the partition no longer exists
//	new                a partition the checkpoint does not know (not a problem:
//	                   it is read from its earliest offset)
//
// A Spark checkpoint has no plan file: its topic identity is unknown and the
// report says so. File sources: the files the file source log recorded for
// an in-flight batch, or recorded and not yet in any batch, must still exist;
// each one that does not is a gap.
//
// # Archive and fresh start
//
// Archive copies every key of a checkpoint, byte for byte, to a destination
// on any store (create-only writes), re-lists the destination and compares
// every key's size and SHA-256 with the source, and then writes the
// manifest of keys, sizes and digests to _ckgate/archive-manifest.json at
// the destination (a source that is itself an archive keeps its own
// manifest, copied like any key). The source is never modified by a plain
// archive and never deleted by anything here. A destination that already
// holds any key is refused (gateway.ErrExists).
//
// With FreshStart, Archive then writes _ckgate/archived.json at the source
// (create-only): the destination, the time, the principal, the reason and
// the manifest digest. That marker is the audited record that the query
// moved on: the old root is kept as it is, and the query is pointed at a new,
// empty checkpoint root (`ckgate run SPEC --checkpoint NEW_URL`); with
// ArchiveOptions.NewRoot that root is checked empty first and recorded in the
// marker. Reusing an archived root is refused by CheckNotArchived
// (ErrArchived); deleting it is left to retention and the policy, not to a
// fresh start. Callers wrap the stores with the policy authorizer
// (policy.NewAuthorizer) so that every write is decided and logged.
//
// FreshStart writes, all create-only and in this order: the boundary to the
// new root's _ckgate/start.json (source.StartKey), the archive and the old
// root's _ckgate/archived.json, then the same MigrationRecord (old root,
// archive, new root, boundary, principal, reason, time, old query id,
// manifest digest) to the new root's _ckgate/migrated-from.json
// (MigratedFromKey) and the old root's _ckgate/migrated-to.json
// (MigratedToKey). The boundary (source.StartPoint) is either
//
//   - Kafka offsets {"topic":{"partition":offset}} (given, or the first
//     record at or after a time: KafkaOffsetsAfter): the Kafka source's
//     first run on the new root takes them as its initial offsets
//     (sources/0/0);
//   - a files boundary (source.FilesStart, made by FilesBoundary): a time
//     (files modified at or after it are new input, older ones processed) or
//     the files already processed, carried over from the old checkpoint's
//     file source log up to a log offset or a batch (ParseFilesBoundary), or
//     named. The files source skips them on every run on the new root, so
//     the new checkpoint's first batch starts right after the boundary.
//
// # Errors
//
// Checked with errors.Is; the CLI's exit status is in brackets:
//
//   - ErrBadPolicy [1]: a RetentionPolicy that cannot be applied (no clock,
//     a negative duration, min batches below 1).
//   - ErrPlanFile [2]: a retention plan file that is not one; ErrPlanStale
//     [3]: the checkpoint changed since the plan was reviewed (a
//     *StaleError, also gateway.ErrPrecondition).
//   - ErrNoBrokers [2]: gap on a Kafka checkpoint without brokers.
//   - ErrBadBoundary [2]: a fresh-start boundary that does not parse.
//   - ErrOverlap [2]: archive, restore or fresh-start locations inside one
//     another (CheckApart).
//   - ErrDestNotEmpty [3] (gateway.ErrExists), ErrNotRegular [1],
//     ErrVerify [1] (a *VerifyError lists the mismatches), ErrNotArchive
//     [2], ErrArchived (a run on an archived root is refused as in use
//     [3]), ErrRestoreIncomplete [1].
//   - checkpoint.ErrNotCheckpoint [2] and checkpoint.ErrCorrupt [1; 2 for
//     gap and fresh-start, whose input it is] from the files read; store
//     errors pass through wrapped with the key.
package lifecycle

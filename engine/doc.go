// Package engine is ckgate's embedded micro-batch streaming engine. A query
// (a spec, see package spec) runs as a sequence of batches, and its
// checkpoint — Spark Structured Streaming's layout — is written only
// through a gateway.Session, so it is atomic and single-writer on every
// store.
//
// # A batch
//
// Batch N: the writer check (Session.BeginBatch, one read) → the source
// plans its end offsets → offsets/N (create-only, with the batch watermark,
// timestamp, conf and writer epoch) → the rows are read, filtered, stamped
// late or on time, and fed to the operator → the sink commits batch N
// (idempotent by batch id) → the operator's changed state goes to new,
// uniquely named state files → commits/N (create-only, with the next
// watermark and the state file of every partition).
//
// # Restart
//
// As Spark: the latest offsets/N without commits/N is re-run with exactly
// those offsets, watermark and timestamp, from the state named by
// commits/N-1; with commits/N present the query plans batch N+1. The first
// run writes metadata ({"id":…}) and _ckgate/plan.json (plan fingerprint,
// partitions, source and sink identity); a restart with another plan,
// source or sink is refused, and the partitions recorded there win over the
// spec's.
//
// Before it takes the writer session, Open checks every file a restart
// reads (metadata, the latest offsets and the one before, the latest
// commit and how the logs relate, the writer record, the plan, operator
// metadata, a file source's log, and the state file chains the commit
// names). A missing, empty, truncated, corrupt or too-new one is refused
// with a *CorruptError (ErrCorrupt) naming the file and the safe next
// step; nothing is written, and ckgate never overwrites or repairs it.
//
// # Watermark and late rows
//
// The watermark of batch N is the largest event time seen in batches before
// N minus the spec's watermark delay; it never goes down and comes from the
// log on restart. A stateful operator drops rows at or below the batch
// watermark (counted as late) and uses the watermark to emit and evict
// windows, sessions and dedup keys. When the watermark has moved past the
// last batch's and there is no new data, a no-data batch runs so that
// closed windows are emitted (as Spark does).
//
// # Errors
//
// Checked with errors.Is; the CLI's exit status for each is in brackets
// (cmd/ckgate/exitcode.go chooses it):
//
//   - ErrCorrupt [1]: the checkpoint's log or a file a restart reads is not
//     what the engine wrote (a gap, a commit without offsets, bytes that do
//     not decode). It is checkpoint.ErrCorrupt (and engine/state's
//     ErrCorrupt): one value, whichever layer found the damage. Open's
//     refusal is a *CorruptError naming the key and the next step.
//   - ErrIncompatible [1]: the spec's source, sink, stateful plan or state
//     format differs from what _ckgate/plan.json records.
//   - checkpoint.ErrUnsupportedVersion [1]: a file of a newer version than
//     this engine reads (a *CorruptError too, refused the same way).
//   - gateway.ErrInUse, gateway.ErrFenced [3]: another writer holds or took
//     the checkpoint; the store's own kinds (gateway.ErrPermission,
//     gateway.ErrUnavailable, …) pass through wrapped with the key [1].
package engine

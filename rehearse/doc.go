// Package rehearse runs failure drills on an isolated copy of a streaming
// query before it meets them in production: `ckgate rehearse SPEC`.
//
// Each drill runs the query of a spec with ckgate's real engine on its own
// checkpoint and sink under a work directory (the spec's files sink is
// redirected there; an http sink is redirected to an in-process receiver
// that counts effects by idempotency key). The production checkpoint is
// only read, by archiving it (lifecycle.Archive) into the work directory;
// the production sink is never opened.
//
// # Scenarios
//
//  1. crash-after-offsets: the process dies right after offsets/N is
//     written, before the sink sees batch N; a restart re-runs N.
//  2. crash-after-sink-write: the sink wrote batch N's data but not its
//     manifest (files sink) or ledger entry (http sink).
//  3. crash-before-commit: the sink committed batch N but commits/N was
//     never written (committed but not reported).
//  4. stale-checkpoint: a restart from an older, archived copy of the
//     checkpoint against a sink that holds newer batches.
//  5. late-events: extra input with rows inside the watermark delay, rows
//     at and beyond it, and exact duplicates; a crash before the commit of
//     the batch that reads them.
//  6. second-writer: a second writer on the same checkpoint is refused; a
//     forced one fences the first, which stops cleanly after at most one
//     more batch, and the survivor finishes.
//  7. store-faults: 10% of store requests fail, fail after doing the write
//     (ambiguous) or time out; the query is restarted until it completes.
//
// # Reconciliation
//
// The reference is the same query run fault-free on an in-memory store
// (gateway/memstore) over the same input, so the batch plan (files per
// batch, hence the watermark of each batch) is identical. A drill's sink is
// compared with the reference's as a multiset grouped by business key (the
// output's key columns: the operator's keys and the window, or the whole
// row): a reference row the drill does not hold is lost; a drill row beyond
// the reference's copies, or one the reference never produced, is
// duplicated. Late rows dropped and the state rows left at the end must
// match the reference too.
//
// # Cutover
//
// Cutover rehearses a switch to a changed query (`ckgate rehearse
// --candidate NEW_SPEC`): the current spec and the candidate each re-run
// the same bounded input (a batch range of the production checkpoint's
// log, or the batches reading an event-time interval) from the same
// restored state, on their own copies of the checkpoint and into their own
// isolated outputs, optionally with a restart in the middle; the outputs
// are reconciled by business key (ReconcileCutover), the input rows each
// handled as late are compared, and the report says same or differs. A
// candidate that compat calls not_allowed runs from empty state at the
// boundary, as lifecycle.FreshStart starts a new root, and the report says
// it needs a new checkpoint.
//
// # Errors
//
// Run returns an error wrapping ErrSetup when it cannot rehearse at all (a
// spec whose source or sink it cannot isolate, missing input, a non-empty
// work directory); a scenario that fails is a Result with OK false, not an
// error.
package rehearse

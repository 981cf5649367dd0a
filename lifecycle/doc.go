// Package lifecycle holds what happens to a checkpoint over its life,
// beyond the query that writes it: whether its sources can still replay
// what it will resume from (Gap), and keeping an old checkpoint as a
// verified copy before a query starts afresh (Archive).
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
// manifest, copied like any key). The source is never modified by a plain archive and
// never deleted by anything here. A destination that already holds any key
// is refused (gateway.ErrExists).
//
// With FreshStart, Archive then writes _ckgate/archived.json at the source
// (create-only): the destination, the time, the principal, the reason and
// the manifest digest. That marker is the audited record that the query
// moved on: the old root is kept as it is, and the query is pointed at a new,
// empty checkpoint root (`ckgate run SPEC --checkpoint NEW_URL`); with
// ArchiveOptions.NewRoot that root is checked empty first and recorded in the
// marker. Reusing an
// archived root is refused by CheckNotArchived (ErrArchived); deleting it is
// left to retention and the policy, not to a fresh start. Callers wrap the
// stores with the policy authorizer (policy.NewAuthorizer) so that every
// write is decided and logged.
package lifecycle

// Package state is the engine's versioned, incremental state store. Each
// stateful operator keeps its state in partitions; each partition is a map
// of byte keys to byte values, and each batch that changes a partition
// writes one new file for it through the checkpoint session's store:
//
//	state/<operator>/<partition>/<version>_<write id>.delta     the changes of one batch
//	state/<operator>/<partition>/<version>_<write id>.snapshot  the whole map at that version
//
// Batch N writes version N+1 (Spark's numbering). The write id is fresh for
// every attempt, so a re-run batch or a fenced zombie never overwrites a
// file that a commit names; commits/N lists, per operator and partition,
// the file that holds the partition's state after batch N (its "tip";
// Spark's stateUniqueIds slot). A partition that a batch did not change
// keeps its tip. Files that no commit names are garbage, never state.
//
// # Chains, snapshots and recovery
//
// Every file names the file it builds on (its base), so a tip alone says how
// to rebuild the partition: follow the bases back to a snapshot (or to the
// empty map), then apply the files oldest first. A partition's first file
// is a snapshot; later a snapshot is written instead of a delta when the
// deltas since the last snapshot (the new one included) add up to at least
// Policy.Ratio times its size, or when the chain already has Policy.Every
// deltas, whichever comes first. Ratio bounds the bytes a batch writes on
// average (a snapshot of S bytes follows about Ratio·S bytes of deltas, so
// it costs at most delta/Ratio per batch) and the bytes a recovery reads
// (at most about (1+Ratio)·S); Every bounds the files a recovery reads.
//
// # Encoding (version 1)
//
// All integers are unsigned LEB128 varints unless said otherwise.
//
//	magic      "CKGS"                 4 bytes
//	format     1                      1 byte
//	kind       'd' delta | 's' snapshot
//	version    the store version this file brings the partition to
//	depth      deltas since the snapshot the chain starts from (0 for a snapshot)
//	chainBytes bytes of those deltas, this file included (0 for a snapshot)
//	snapBytes  size of that snapshot file (0 when the chain starts empty)
//	base       length, then the file name of the base ("" for none)
//	records    { op: 1 put, key length, key, value length, value
//	           | op: 2 delete, key length, key }*   keys in ascending order
//	end        op 0
//	checksum   CRC-32C (Castagnoli) of every byte before it, 4 bytes big-endian
//
// A snapshot holds puts only. Decode refuses a file that breaks any of
// these rules (ErrCorrupt), so a torn or foreign file is never taken for
// state.
package state

// Package delta reads Delta Lake tables (PROTOCOL.md of delta-io/delta)
// through any gateway.Store, without the engine: the log file names, the
// actions of a commit, _last_checkpoint, snapshots at a version (JSON replay
// on top of the right checkpoint: classic, multi-part, or v2 with sidecars),
// the table id history, the txn version per application id, the protocol and
// its features, the earliest version the log can still replay, the files
// added at or after a version, and the tombstones with their deletion times.
//
// The Delta sink and source of the engine share the action types and the
// log-file naming helpers of this package.
//
// # Keys
//
// A table is a gateway.Store rooted at the table's directory: its log is
// under "_delta_log/" (LogDir). Paths in add and remove actions are URI
// encoded and relative to that root, or absolute URIs (see Add.Key).
//
// # Errors
//
// Every error about a stored object names its key. Check kinds with
// errors.Is:
//
//   - ErrNotDelta: the location has no _delta_log (or an empty one).
//   - ErrCorrupt: a commit, checkpoint or _last_checkpoint does not follow the
//     format (bad JSON, an action without its required fields, a checkpoint
//     that is not parquet). It is checkpoint.ErrCorrupt (engine.ErrCorrupt)
//     too: one corrupt kind, whichever layer found the damage.
//   - ErrLogGap: a version the reader needs is missing from the log (not
//     contiguous, or cleaned up): *GapError says which.
//   - ErrUnsupportedProtocol: the table needs a reader version or feature this
//     package does not read (*ProtocolError names it).
//   - ErrCatalogManaged: the table's newest commits live in a catalog
//     (reader feature catalogManaged): the log on storage cannot tell.
//
// The gateway's kinds (gateway.ErrNotFound, ErrPermission, ErrTooLarge, …)
// stay reachable through the wrapping.
package delta

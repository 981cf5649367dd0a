// Package checkpoint reads and writes the checkpoint layout of a
// micro-batch streaming query — Apache Spark Structured Streaming's, which
// ckgate's engine writes too — through any gateway.Store, and inspects a
// checkpoint written by Spark (2.1 to 4.x) or by ckgate.
//
// # Codecs
//
// Each file of the layout has a decoder, and an encoder where ckgate's
// engine writes the same format. Every decoder accepts files with or
// without a trailing newline, returns an error (never panics) on corrupt
// input, and reports a version newer than it understands as a
// *VersionError naming the highest one understood.
//
//	metadata                        {"id":…}                       DecodeStreamMetadata, StreamMetadata.Encode
//	offsets/<N>                     v1, v2 (OffsetMap)             DecodeOffsetSeq, OffsetSeq.Encode, ParseSourceOffset
//	                                file, Kafka, rate, long offsets DecodeFileSourceOffset, DecodeKafkaOffsets, EncodeKafkaOffsets
//	commits/<N>                     v1 ({} or nextBatchWatermarkMs), v2 (stateUniqueIds)  DecodeCommit, CommitMetadata.Encode
//	sources/<i>/<N>[.compact]       file source log, Kafka initial offsets, rate start time
//	                                DecodeFileSourceLog, EncodeFileSourceLog, ReadFileSourceLog, DecodeKafkaInitialOffsets, ClassifySourceLogFile
//	<output>/_spark_metadata/<N>    file sink log with compaction  DecodeFileSinkLog, EncodeFileSinkLog, ReadFileSinkLog
//	state/<op>/_metadata/…          operator metadata v1, v2       DecodeOperatorMetadata, OperatorMetadata.Encode
//	…/_metadata/schema, _stateSchema state schema v1, v2, v3       DecodeStateSchema, StateSchema.Encode
//	<v>.delta, <v>.snapshot         HDFS provider: lz4-java blocks (XXH32-checked), then the
//	                                length-prefixed record stream: puts and deletes are
//	                                counted, rows are not decoded   CountDelta, CountSnapshot, EncodeDelta, DecodeLZ4Block
//	<v>.zip, <v>.changelog          RocksDB provider: zip listing and metadata, changelog v1–v4
//	                                (v3/v4 lineage); SST files are never read   DecodeRocksDBZip, DecodeChangelog
//	<v>_<uuid>.*                    checkpoint format v2 / ckgate attempt names   ParseStateFileName
//	<v>_<id>.delta|snapshot "CKGS"  ckgate engine state: header (version, base file), CRC-32C,
//	                                record counts               DecodeCkgateState
//	.<name>.crc, <name>.crc         Hadoop CRC32 sidecars, Spark 4.1 checksum files   DecodeHadoopCRC, DecodeFileChecksum
//
// Only the lz4 state codec (Spark's default, and the only one in Spark's
// golden checkpoints) is decoded; lzf, snappy and zstd state files are
// listed and reported with an unsupported-codec finding. The Read* helpers
// read one file through a store and name its key in every error.
//
// # Inspect
//
// Inspect lists the checkpoint once (the metadata, offsets/, commits/,
// sources/, state/ and _ckgate/ prefixes in parallel, each paged by the
// store) and reads only: metadata; _ckgate/writer and _ckgate/plan.json;
// offsets/L, offsets/L-1 and commits/C; the detailed batches
// (Options.Batch, else the latest Options.MaxBatches); each operator's
// metadata (v1 and the latest v2) and each store's schema; the latest file
// of each source log; and per state store partition the files of its
// latest Options.MaxStateVersions versions plus those needed to rebuild the
// version a restart loads (a base snapshot or zip, the lineage of a
// checkpoint-v2 changelog). Checksum sidecars of the files read are
// verified (all of them with Options.VerifyAllChecksums). Reads run at
// most Options.Concurrency at a time.
//
// The status follows Spark's restart rules (MicroBatchExecution): with L
// the latest offsets batch and C the latest commit, clean is C = L (a
// restart plans L+1), in_flight is C = L-1 or no commit log (L is re-run
// with the same offsets and watermark; C < L-1 is in flight too, with a
// warning), inconsistent is any of: commits ahead of offsets, offsets/L-1
// missing, offsets without the metadata file (SPARK-55058), or one of
// metadata, offsets/L, offsets/L-1, commits/C unreadable; empty is no batch
// yet. The state a restart loads is version L+1 when clean, else L, and
// each partition of each store must rebuild it: from the latest snapshot
// (or zip) at or below it plus one delta (or changelog) per later version,
// or, when commits/C names state unique ids, from the named file and the
// lineage it records (Spark's checkpoint format v2), or, when it names
// each partition's tip file (ckgate's engine), from the tip back through
// the base each file names to a snapshot or the empty state.
//
// # Findings
//
// Problems are findings, never errors: Inspect fails only when the store
// cannot be listed (ErrNotCheckpoint when nothing of a checkpoint is
// there) or the context ends. Each finding has a stable id, a severity,
// the key it is about, a message saying what it means, and Next: the safe
// next step (restore from an archive, start over with a fresh start, run
// the newer version that wrote it, or nothing). Severity depends on the
// file's role: a problem with a file a restart needs (metadata, offsets/L
// and L-1, commits/C, writer record, ckgate's plan, the latest source log
// file, operator metadata, schemas, the rebuild chain) is an error,
// elsewhere a warning. A JSON error that ends inside a value (a file cut
// short) is ErrTruncated, reported as truncated rather than corrupt.
//
// Package corrupttest derives the corrupt variants of a clean checkpoint
// that the reliability tests check inspect and the engine against.
//
//	id                       severity        meaning
//	metadata-missing         error           offsets exist but "metadata" does not (SPARK-55058)
//	offsets-gap-latest       error           offsets/L-1 is missing: Spark refuses to restart
//	offsets-gap              warning         offsets missing between retained batches
//	commits-ahead            error           a commit beyond the latest offsets, or commits without offsets
//	commits-behind           warning         C < L-1: Spark warns and re-runs L
//	commits-gap              warning         commits missing between retained batches
//	commit-without-offsets   warning         a commit whose offsets entry is gone
//	no-commit-log            info            no commits/ (Spark 2.1): L is re-run
//	zero-byte                error|warning   an empty file
//	truncated                error|warning   a file that ends early
//	corrupt                  error|warning   a file that does not decode
//	unsupported-version      error|warning   a format version newer than understood
//	unreadable               error|warning   the store refused to read the file
//	checksum-mismatch        error|warning   a file differs from its sidecar (Hadoop .crc: warning)
//	orphan-checksum          info            a sidecar without its file
//	not-regular-file         error           a FIFO, device or socket in the tree (never opened: it could block)
//	temp-file                warning         a leftover temp file of an interrupted write (or its Hadoop .crc)
//	ignored-file             info            a name outside the layout
//	state-unrebuildable      error           the version a restart loads cannot be rebuilt
//	state-partition-missing  error           a partition of a store has no files
//	state-single-partition   info            a store with partition 0 only (e.g. a global limit)
//	state-partition-extra    warning         a partition beyond the recorded partition count
//	state-newer-than-commit  info|warning    state versions beyond the one a restart loads
//	state-uncommitted        info            unique-id state files no commit names (failed or fenced attempts)
//	state-without-offsets    error           state files but no offsets
//	state-missing            error           commits/C names an operator without state
//	unsupported-codec        warning         state files in a codec not decoded here
//	writer-live              info            a ckgate writer holds its lease
//	source-log-missing       error           a file source log batch a restart reads is gone
//	partitions-mismatch      warning         operator metadata and offset log disagree on partitions
//	sink-ahead               warning         the file sink log (Options.Sink) holds batches beyond L
//	sink-owner-differs       warning         the file sink's owner record names another query
//	restore-incomplete       error           a restore into the root began and did not complete
//	batch-out-of-range       error           a log file named by a batch id beyond MaxBatchID (2^62)
//
// Report.OK is false for an inconsistent status or any error finding;
// `ckgate inspect` exits 0 when it holds, 1 otherwise, 2 on
// ErrNotCheckpoint.
//
// # Errors
//
// Checked with errors.Is; every error about a stored object names its key
// (a *KeyError for the Read* helpers: ReadPlan, ReadQueryID, ReadCommit,
// …). The CLI's exit status is in brackets:
//
//   - ErrNotCheckpoint [2]: nothing at the location looks like a
//     checkpoint.
//   - ErrCorrupt [1, or 2 where a command reads it as its input: gap,
//     fresh-start's plan]: the bytes do not follow the format.
//     ErrTruncated (cut short) is ErrCorrupt too. It is the one value
//     engine.ErrCorrupt and engine/state's ErrCorrupt are (package errkind
//     holds it so that engine/state need not import this package).
//   - ErrUnsupportedVersion [1]: a version newer than understood (a
//     *VersionError says which file kind and versions).
//   - ErrUnsupportedCodec: a state codec other than lz4; Inspect reports it
//     as a finding and goes on.
//   - gateway.ErrNotFound [2], gateway.ErrTooLarge: passed through from the
//     store (GetBounded refuses a file above its bound before reading it).
//
// The state chain (statechain.go: WalkStateChain, LineageStateChain,
// LinkedStateChain) returns no errors: a chain that cannot be built says
// why in StateChain.Problem.
package checkpoint

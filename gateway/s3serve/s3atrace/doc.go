// Package s3atrace replays what Apache Spark's checkpoint file managers
// send to S3 through Hadoop's S3A connector, request by request, with
// aws-sdk-go-v2: the test and benchmark support of the S3 front door
// (gateway/s3serve, `ckgate serve`). It is the one model of those
// sequences; tests and benchmarks build on it instead of spelling them out.
//
// A Driver is one Spark driver process on one checkpoint root. Its methods
// return Steps: named closures, one S3A file-system call each (an
// existence probe, a PUT of a temp, a COPY, a DELETE, a multipart part),
// so a test can stop after any step, run steps of several drivers in
// lock step, or kill the server between two steps. Run runs a list the
// way Spark does: in order, stopping at the first failure, except that a
// failed rename still deletes its temp (Spark's cancel()).
//
// # The sequences
//
// For a log entry (offsets/N, commits/N, metadata, sources/0/0,
// _spark_metadata/N with its N.compact every 10th), the default file
// manager (FileContext on s3a) sends: HEAD key + LIST key/ (does it
// exist?), PUT key's temp `.N.<uuid>.tmp` in the same directory, HEAD key +
// LIST key/ again (rename's destination check), CopyObject temp → key with
// x-amz-copy-source-if-match, DELETE temp. AbortableStreamBasedCheckpoint-
// FileManager sends HEAD + LIST, then one PUT of key with If-None-Match: *
// (Hadoop ≥ 3.4's conditional create); an abort sends nothing more.
// State files (state/0/<part>/<v>.delta, a RocksDB <v>.zip) are written
// the same way with overwrite allowed: no condition, and the default
// manager's rename deletes an existing destination first; RocksDB SSTs are
// uploaded by multipart upload; the HDFS store writes a snapshot every ten
// versions. With minBatchesToRetain, every batch lists offsets/ and
// commits/ and deletes what lies below the threshold, and the state
// store's maintenance deletes the versions no retained batch needs.
//
// With Driver.Process set, every request carries S3A's audit referrer
// (fs.s3a.audit.enabled): a Referer header whose `ps` field names the
// process, which the front door uses to fence zombie drivers.
package s3atrace

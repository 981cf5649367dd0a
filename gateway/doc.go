// Package gateway is the checkpoint storage contract of ckgate: the Store
// interface every backend implements, the conditions and error kinds it
// speaks, the URL registry that opens backends, the decorators that wrap any
// Store (prefix, metrics, faults, authorization) and the single-writer
// Session that fences zombie writers.
//
// # Contract
//
// A Store holds immutable-by-convention objects under relative,
// '/'-separated keys. Put with IfAbsent is create-only and atomic under
// races: of N concurrent writers of one key exactly one succeeds and the rest
// get ErrExists. Put with IfMatch is compare-and-swap on the version returned
// by Get, Stat or an earlier Put; a stale version gets ErrPrecondition. A
// backend that cannot honour a condition refuses it with ErrUnsupported; it
// never silently falls back. No partial object is ever visible under its
// final name.
//
// # Writing a backend
//
// A backend is a Driver: its raw operations (Get, Stat, GetStream, List,
// Put, PutStream, Delete) and one classifier, Kind(err, cond), that maps its
// own errors to the kinds below (a cloud driver checks its service's error
// codes and then StatusKind). NewBucket turns it into a Store; the Bucket
// owns key and prefix validation (ValidateKey, ValidatePrefix and the
// driver's optional NameChecker), condition checks (CheckPutCond,
// CheckDeleteCond), the context check, the key prefix (NewBucket's prefix,
// WithPrefix), wrapping each error once as an *Error naming the caller's
// key, the closed guard and the metrics hook (an Observer, see
// Bucket.WithObserver, called once per call with its Op, duration and
// wrapped error). Every backend here is such a driver (filestore,
// s3store, gcsstore, azstore, memstore); memstore is the whole of one in
// under 200 lines, and its optional ranged read, page and copy (see the
// section on ranges, pages and copies) in 60 more. Metrics.Wrap installs the hook
// on a Bucket, which stays a Bucket (its native optional calls count once),
// and is an interceptor over any other Store; faults, policy and logging
// are decorators over any Store (Faults.Wrap, WithAuthorizer, Intercept),
// never a backend's concern. A driver that writes conditionally puts a fresh write
// id into each object's metadata and settles a refusal with Refused.Settle
// (see # Errors). The new backend then runs the conformance suite,
// storetest.Run, raw and prefixed, and its own tests check kinds with
// storetest.WantKind and WantKeyKind.
//
// # Ranges, pages and copies
//
// Every Store answers a ranged read (GetRange), one page of a listing
// with a start-after and a delimiter (ListPage) and a copy with a
// destination condition and a source version (Copy). A Bucket uses its
// driver's native operation when the driver has one (RangeDriver,
// PageDriver, CopyDriver: memstore and filestore have all three) and
// otherwise falls back to the required methods; the package functions do
// the same for any Store, so decorators stay correct without forwarding
// them. A page costs one page on a native driver (the continuation of a
// listing never rescans what came before); Next of a truncated page, given
// as the next page's after, continues it, even when it is a common prefix.
// An authorized store decides a copy exactly as a PutStream of its
// destination.
//
// # Directory markers
//
// Hadoop's mkdirs on S3 writes an empty object named like a directory
// ("offsets/"), which no Store key can be (a key never ends in '/'). Such
// a marker is stored as the ordinary key DirMarkerKey(dir), dir plus
// "/" + DirMarkerName ("offsets/.dir.ckgate"), and DirMarker maps it back.
// It works on every store alike, is listed like any key, and deleting it
// leaves the directory's other keys. Its name starts with '.', so Spark and
// Hadoop skip it as hidden; ckgate's checkpoint readers ignore it, and
// retention keeps it as a file outside the layout.
//
// # Errors
//
// Every error a Store returns for a key is an *Error that names the
// operation and the key and matches exactly one kind with errors.Is:
// ErrNotFound, ErrExists, ErrPrecondition, ErrPermission, ErrUnavailable
// (retryable), ErrUnsupported, ErrInvalidKey or, for a conditional write,
// ErrUnknownOutcome. A refused conditional write is settled by reading
// the key back (Refused.Settle), on every backend: the stored object is
// this write's, success; the read-back fails after a retried attempt,
// ErrUnknownOutcome, never ErrUnavailable; otherwise the refusal stands,
// ErrExists or ErrPrecondition. The backend's own error (an SDK error, a syscall
// error) stays reachable with errors.As. Sessions add ErrFenced and ErrInUse
// (and ErrUnknownOutcome for their own writes); the authorizer adds
// ErrDenied; GetBounded and Lines add ErrTooLarge; URL parsing and every
// opener add ErrInvalidURL. KindName gives each kind its one stable name
// (not_found, exists, ...), as reports, metric labels and drills spell it.
//
// The cloud backends share one mapping of HTTP statuses (StatusKind) and
// extend it only with their own error codes: 401 and 403 are
// ErrPermission, never not found; 404 ErrNotFound; 412 ErrExists for a
// create-only write and ErrPrecondition otherwise; 408, 429, 5xx and a bare
// 409 ErrUnavailable (S3's ConditionalRequestConflict, another request on
// the name in flight: retry it, it is not "exists"); 501 and other 4xx
// ErrUnsupported. Azure's 409 BlobAlreadyExists on a create-only write is
// ErrExists (Azurite answers a lost create so, where Azure may answer 412),
// and its lease codes are ErrPrecondition.
//
// A conditional write whose outcome is ambiguous (an attempt timed out or
// failed and was retried, and the retry was refused) is settled by
// Refused.Settle on every backend: each write carries a fresh write id in
// the object's metadata, and the refusal is read back. The caller's own
// write is success; a read-back that fails too after a retried attempt is
// ErrUnknownOutcome, never the retryable ErrUnavailable (after which a
// retried create would see ErrExists for its own write) and never a guess;
// otherwise the refusal stands (ErrExists or ErrPrecondition).
//
// # Hostile files
//
// The checkpoint files ckgate parses whole (metadata, offsets, commits, the
// writer record, the plan, other small records) are read through
// GetBounded: at most MaxFileBytes, refused before any byte is read when
// the store announces more. Logs that legitimately grow are streamed
// through Lines, one line of at most MaxLineBytes at a time. On the
// local disk a key that names a FIFO, a device or a socket is never opened
// in a way that can block and is refused with NotRegular, saying what it
// is; List skips such names and ListNonRegular yields them, so a copier can
// refuse a tree that holds one. Local input files (specs, plans, policy
// inputs) are read with ReadRegularFile under the same rules, and local
// logs (an access log, the decision log) are opened with AppendRegularFile.
//
// One reader per question: a checkpoint's metadata file is parsed only by
// ParseMetadataID (ReadMetadataID reads it), whether by the writer session,
// the open policy, the audit or engine/checkpoint; a metadata file that does
// not parse, or names no id, refuses the open (ErrInvalidKey) instead of
// reading as a new checkpoint. A log entry's batch name is recognised only
// by AllDigits: any run of digits, zero-padded or longer than an int64
// prints, as Spark reads it.
//
// # URLs
//
// Open resolves a URL through an explicit Registry (no init-time
// registration): plain paths and file:// URLs name a directory on the local
// disk; the cloud schemes are registered by package stores (s3://BUCKET/PREFIX,
// gs://BUCKET/PREFIX, az://ACCOUNT/CONTAINER/PREFIX), and mem://NAME/PREFIX
// by whoever wants in-memory stores (memstore.Named). A URL that is
// malformed for its scheme (an empty one, "s3:bucket" without "//", an
// unknown scheme, a remote file host, an unknown query parameter, a secret in
// the URL) is refused before any I/O with an error wrapping ErrInvalidURL, on
// every scheme alike: the CLI's usage error (exit 2). Messages name URLs
// redacted (see Redact).
package gateway

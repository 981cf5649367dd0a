// Package s3serve is ckgate's S3 front door (`ckgate serve`): an S3 API
// over any gateway.Store, so that Spark (Hadoop S3A), Flink and any S3
// client write checkpoints through the gateway's guard.
//
// # The S3 server library
//
// It is built on versitygw (github.com/versity/versitygw v1.8.0,
// Apache-2.0), used as a library: its s3api router (fiber v3) parses every
// S3 request, verifies AWS SigV4 (header, presigned query, aws-chunked
// streaming payloads with trailers, clock skew) and answers in S3's XML;
// this package supplies its backend.Backend (storeBackend, over a Store)
// and its auth.IAMService (iam, over the credentials file). Why versitygw:
// it is maintained, its router, auth and backend interface are exported
// (s3api.New takes a Backend and an IAMService), its
// backend.BackendUnsupported answers NotImplemented for every operation a
// backend leaves out (never a silent success), and ckgate's tests already
// use its server as the S3 emulator, so one S3 implementation is checked
// from both sides. Cost, measured on this machine (2 cores): the ckgate
// binary grows from 113.8 MB to 124.2 MB (+10.4 MB, +9%); an incremental
// `go build ./cmd/ckgate` after adding it took 6 s. Its module brings in
// fiber/fasthttp and, through its auth package, LDAP and Vault clients
// that ckgate never calls (linked, unused).
//
// # Principals and the guard
//
// Every access key of the credentials file maps to a principal (id and
// kind: job, retention, housekeeping, admin). versitygw sees every account
// with its admin role, so that its own ACL and bucket-policy checks step
// aside; the decision is ckgate's: every PUT, COPY and DELETE goes to the
// store returned by Config.Guard for the signing principal (the same
// policy.Guard the engine's commands use), reads go to the store directly.
// versitygw's root account is random and never shown: nobody signs with it.
//
// # Checkpoint semantics
//
// A PUT or COPY whose destination is a log entry (IsLogEntry: offsets/N,
// commits/N, metadata, sources/S/N, _spark_metadata/N and .compact files)
// with no condition of its own is written create-only (gateway.IfAbsent):
// of racing S3A drivers committing the same offsets/N (temp PUT, then
// CopyObject with x-amz-copy-source-if-match), exactly one wins and every
// other gets 412 PreconditionFailed, never 409. An unconditional overwrite
// of an existing log entry is refused the same way. A DELETE of a missing
// key answers 204; a stale If-Match is 412.
//
// A conditional PUT from ckgate's own S3 driver (it sends a write id,
// x-amz-meta-ckgate-write-id) that the store refuses although the stored
// object holds exactly its bytes is the driver's own earlier attempt,
// applied by a front door that died or was cut off before answering and
// retried by the SDK: it is answered as applied (ownRetry), since the
// stores keep no object metadata for the driver to read its write id back.
//
// # Errors
//
// Store error kinds map to S3 codes (s3Error): ErrNotFound → NoSuchKey
// 404, ErrExists and ErrPrecondition → PreconditionFailed 412, a policy
// refusal (gateway.ErrDenied) → AccessDenied 403 with the rule's message,
// ErrPermission → AccessDenied 403 naming the backend, ErrUnavailable →
// ServiceUnavailable 503. Secrets never appear in errors: they name access
// keys only.
//
// # Multipart uploads
//
// Parts are hidden objects of their bucket (multipartPrefix), written to
// the store directly: they are nobody's checkpoint until Complete, which
// streams them in order into one PutStream of the destination through the
// principal's guard with PutObject's conditions (a log entry
// create-only), then deletes them. The object's ETag is the store's
// version, as for PutObject. See multipart.go.
package s3serve

// Package s3store is the Amazon S3 backend of the gateway, on
// aws-sdk-go-v2. It also speaks to S3-compatible servers that implement
// conditional writes (versitygw is the one the tests run against).
//
// # URLs
//
//	s3://BUCKET[/PREFIX][?PARAM=VALUE&...]
//
// BUCKET is a general purpose bucket name (3 to 63 lowercase letters,
// digits, '-' and '.'). PREFIX, when given, is a relative key prefix:
// every key is stored as PREFIX/key and callers never see the prefix.
// Parameters (each at most once; an unknown one is refused, never ignored):
//
//   - region: the bucket's region (default: AWS_REGION or the profile's
//     region; "us-east-1" when endpoint is set and nothing else says).
//   - endpoint: http(s)://host[:port] of an S3-compatible server, or of a
//     VPC endpoint.
//   - path_style: true to address the bucket in the path
//     (http://host/bucket/key) rather than in the host name; most
//     S3-compatible servers need it.
//   - profile: the shared configuration profile (~/.aws/config) to load.
//   - role_arn: a role to assume with STS on top of the loaded credentials.
//     A role_arn in the profile itself is honoured without this parameter.
//   - role_session_name: the session name of the assumed role.
//   - external_id: the external ID the role's trust policy asks for.
//   - part_size: the part size of multipart uploads (PutStream), in bytes
//     or with a KiB, MiB or GiB suffix, from 5MiB to 5GiB (default 8MiB).
//   - max_attempts: attempts per request, retries included, 1 to 20
//     (default: the SDK's, 3).
//
// Credentials come from the SDK's default chain: AWS_* environment
// variables, the shared files and their profiles (SSO, credential_process,
// source_profile/role_arn), web identity (AWS_WEB_IDENTITY_TOKEN_FILE, as
// on EKS), ECS and EC2 instance roles. Credentials in the URL (user
// information or access-key-like parameters) are refused, and every URL
// printed in an error is redacted first.
//
// Examples:
//
//	s3://ckpt-prod/team-a/query-7?region=eu-west-1
//	s3://ckpt/q?endpoint=http://127.0.0.1:7070&path_style=true
//	s3://ckpt/q?region=us-east-2&role_arn=arn:aws:iam::123456789012:role/job&external_id=ckgate
//
// # Conditions and versions
//
// A Version is the object's ETag in its quoted form, the same from Put,
// Get, Stat, GetStream and List. Put with IfAbsent sends
// If-None-Match: *, with IfMatch it sends If-Match: ETAG; S3 evaluates both
// atomically with the write. PutStream sends the condition on
// CompleteMultipartUpload. S3 answers a conditional write racing another
// one with 409 ConditionalRequestConflict: it is retried (bounded, with
// backoff), never taken for "exists".
//
// The SDK retries timeouts and 5xx answers inside one call, so a create-only
// write whose first attempt was applied but whose answer was lost is refused
// with 412 by its own retry. When any attempt of a call had an unknown
// outcome, a 412 is settled by reading the stored object back: if it holds
// exactly what was written (the same bytes; for a multipart upload, the
// ETag of the parts sent) the write succeeded. Only a real lost race is
// reported as ErrExists or ErrPrecondition.
//
// S3 answers DeleteObject of a missing key with success, so Delete reads
// the ETag first (HeadObject: ErrNotFound, or ErrPrecondition for a stale
// IfMatch), then deletes with If-Match on that ETag. The delete itself is
// conditional, so a concurrent overwrite is never removed blindly; an
// unconditional Delete that meets one starts over. Servers that do not
// report a missing key on a conditional DELETE (versitygw answers 204) can
// let two concurrent deletes of one key both succeed.
//
// # Ranges, pages and copies
//
// The driver implements the optional operations natively (see
// gateway.RangeDriver, PageDriver, CopyDriver):
//
//   - a ranged read is one GetObject with a Range header; the object's size
//     comes from Content-Range, and the 416 InvalidRange of a start at or
//     past the end is an empty read;
//   - a listing page is one ListObjectsV2 (Prefix, Delimiter, StartAfter,
//     MaxKeys = max+1, keys and common prefixes counted together), never a
//     rescan from the start;
//   - an unconditional copy is one CopyObject, pinned to the source version
//     with x-amz-copy-source-if-match. A copy under IfAbsent or IfMatch is
//     one CopyObject with If-None-Match / If-Match only on Amazon S3 (no
//     endpoint, or an amazonaws.com one): S3-compatible servers may ignore
//     those headers on a copy and overwrite the destination (versitygw 1.8
//     does), so elsewhere the source is read (If-Match on its ETag) and
//     streamed into a conditional PutStream. The bytes then pass through
//     ckgate, but the condition holds; so they do for a source over the
//     5 GiB a copy takes. A refused copy is settled like a refused Put
//     (the copy carries a write id); an absent or stale source is an error
//     naming the source.
//
// # Errors
//
// Every error is a *gateway.Error naming the operation and the caller's
// key (without the prefix); the SDK's error stays reachable with errors.As
// (smithy.APIError, *smithyhttp.ResponseError, ...). Kinds:
//
//   - ErrNotFound: 404, NoSuchKey, NotFound, NoSuchBucket.
//   - ErrPermission: 401 or 403 (AccessDenied, InvalidAccessKeyId,
//     SignatureDoesNotMatch, ExpiredToken, ...), and credentials that could
//     not be obtained at all. A refusal is never reported as not found.
//   - ErrExists: 412 on an IfAbsent write that lost the race.
//   - ErrPrecondition: 412 on an IfMatch write or delete (stale version),
//     and the 404 S3 answers an IfMatch write of a key that is gone.
//   - ErrUnavailable: throttling (SlowDown, 429, 503), other 5xx, timeouts,
//     lost connections, cancelled contexts, a 409 conflict still there after
//     the retries, and a write whose outcome could not be settled.
//   - ErrUnsupported: 501 NotImplemented (a server without conditional
//     writes), an archived object (InvalidObjectState), and other 4xx
//     answers that retrying cannot fix.
//   - ErrInvalidKey: the key failed gateway.ValidateKey; nothing was sent.
//
// Errors of Open wrap gateway.ErrInvalidURL for malformed URLs.
//
// The Store is a gateway.Bucket over this package's driver: key and
// condition checks, the prefix and the wrapping of errors are the Bucket's;
// the statuses without an S3 code of their own map as on every cloud
// (gateway.StatusKind), and a refused conditional write is settled by
// gateway.Refused.Settle.
package s3store

// Package gcsstore is the Google Cloud Storage backend of ckgate, built on
// cloud.google.com/go/storage (JSON API for writes and metadata, the
// library's default XML API for reads).
//
// Create-only writes carry ifGenerationMatch=0 (storage.Conditions
// DoesNotExist); compare-and-swap carries ifGenerationMatch=<generation>.
// The Version of an object is its generation as a decimal string. Deletes
// with IfMatch carry ifGenerationMatch as well. The condition is always
// checked by the service, never emulated with a read before the write.
//
// # URLs
//
//	gs://BUCKET[/PREFIX][?PARAMS]
//
// Every key of the store lives under PREFIX (a valid key prefix; a trailing
// '/' is implied). The query parameters are:
//
//   - project=ID: the project that owns the bucket; used only when the
//     bucket is created (MakeBucket).
//   - credentials_file=PATH: a JSON credentials file (service account key,
//     authorized user, impersonated service account or external account /
//     workload identity federation) instead of application default
//     credentials. GOOGLE_APPLICATION_CREDENTIALS is honoured as part of
//     application default credentials when this is absent.
//   - impersonate=EMAIL: act as this service account (the caller's
//     credentials need roles/iam.serviceAccountTokenCreator on it), through
//     google.golang.org/api/impersonate.
//   - delegates=EMAIL[,EMAIL...]: the delegation chain for impersonate.
//   - endpoint=URL: the JSON API endpoint, e.g. a Private Service Connect
//     endpoint "https://storage-foo.p.googleapis.com/storage/v1/" or an
//     emulator's "http://127.0.0.1:4443/storage/v1/".
//   - anonymous=true: send no credentials (public buckets, emulators).
//
// Unknown parameters are refused. When STORAGE_EMULATOR_HOST is set the
// client library talks to that emulator without credentials; the
// credentials_file, impersonate and anonymous parameters are then refused
// rather than silently ignored.
//
// # Ranges, pages and copies
//
// The driver implements the optional operations natively (see
// gateway.RangeDriver, PageDriver, CopyDriver): a ranged read is one
// NewRangeReader (a 416 for a start at or past the end is an empty read);
// a listing page is one objects.list request (prefix, delimiter,
// startOffset, maxResults = max+1), never a rescan; a copy is a rewrite
// (CopierFrom) carrying ifSourceGenerationMatch for the source version and
// ifGenerationMatch (0 for IfAbsent) for the destination, which Cloud
// Storage evaluates atomically. fake-gcs-server ignores a rewrite's
// conditions, so with STORAGE_EMULATOR_HOST set (or an endpoint outside
// googleapis.com) a conditional or pinned copy reads the source at its
// generation and uploads it under the condition instead.
//
// # Errors
//
// Every error names the operation and the caller's key (never the bucket
// prefix) and matches one gateway kind with errors.Is; the library error
// (*googleapi.Error, storage.ErrObjectNotExist, a transport error) stays
// reachable with errors.As / errors.Is:
//
//   - 404, storage.ErrObjectNotExist, storage.ErrBucketNotExist: ErrNotFound
//   - 412 conditionNotMet: ErrExists for IfAbsent, ErrPrecondition for IfMatch
//   - 401, 403, refused credentials: ErrPermission (never ErrNotFound)
//   - 408, 409, 429, 5xx, timeouts, cancelled contexts, transport errors:
//     ErrUnavailable
//   - 501 and other 4xx: ErrUnsupported (gateway.StatusKind, shared by
//     every cloud)
//   - names GCS refuses (CR or LF, longer than 1024 bytes with the prefix,
//     ".well-known/acme-challenge/"): ErrInvalidKey, before any request
//
// A conditional write is retried by the client library after a transient
// failure. When such a retry is answered 412, the first attempt may have
// succeeded: every write carries a random write id in its metadata
// (x-goog-meta-ckgate-write-id), and the store reads the object back and
// reports success when it holds this write's id, size and CRC32C. A 412
// that followed no retry is a lost race, without a read. When the read-back
// itself fails after a retry the error is ErrUnknownOutcome (never the
// retryable ErrUnavailable: neither success nor a lost race is claimed; see
// gateway.Refused.Settle). A conditional delete whose
// retry finds the object gone reports success; an unconditional delete is
// not retried by the library. Retries last until the context ends unless
// WithMaxAttempts bounds them.
//
// Credentials and other secrets never appear in errors; URLs are shown with
// gateway.Redact.
//
// The Store is a gateway.Bucket over this package's driver: key and
// condition checks, the prefix and the wrapping of errors are the Bucket's.
package gcsstore

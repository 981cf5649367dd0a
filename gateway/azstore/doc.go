// Package azstore is the Azure Blob Storage backend of ckgate, on the
// official SDK (azblob). Objects are block blobs in one container, under an
// optional key prefix that the backend applies itself; a Version is the
// blob's ETag (without its quotes).
//
// # URLs
//
//	az://ACCOUNT/CONTAINER[/PREFIX][?endpoint=URL][&auth=METHOD]
//
// ACCOUNT is the storage account (3 to 24 lowercase letters and digits),
// CONTAINER the container (3 to 63 lowercase letters, digits and single
// hyphens) and PREFIX an optional key prefix (a valid gateway key).
//
//   - endpoint: the blob service URL, for Azurite
//     (http://127.0.0.1:10000/devstoreaccount1), sovereign clouds or private
//     endpoints. Default: https://ACCOUNT.blob.core.windows.net, or the
//     endpoint of the connection string.
//   - auth: the credential method; default auto.
//
// Credentials are taken the way Azure tools take them; secrets never come
// from the URL (a secret-looking query parameter is refused) and never
// appear in errors. With auth=auto the first that applies wins:
//
//   - connection-string: AZURE_STORAGE_CONNECTION_STRING (account key, SAS
//     or UseDevelopmentStorage=true); its account must be the URL's.
//   - key: AZURE_STORAGE_KEY, a shared key of the URL's account.
//   - sas: AZURE_STORAGE_SAS_TOKEN, a SAS token (with or without '?').
//   - identity: azidentity.DefaultAzureCredential (environment, workload
//     identity, managed identity, Azure CLI, ...).
//
// auth=anonymous sends no credential (public containers). A forced method
// whose variable is unset is an error.
//
// # Conditions
//
// IfAbsent is sent as If-None-Match: * and IfMatch as If-Match: "ETag"; the
// service decides both atomically. Every write carries a write id in the
// blob's metadata (ckgatewriteid). When the SDK pipeline retried a
// conditional write (a timeout after the service had already applied it)
// and the retry is refused, the store reads the blob back: its own write id
// means the write happened and Put returns the new version; any other state
// is the lost race the refusal says. A retried Delete that finds the blob
// gone succeeds. These resolutions need the pipeline policy that Open
// installs (see ClientOptions); a client built without it gets the plain
// answers.
//
// A create-only Put refused although no blob exists (Azurite counts a name
// that holds only the uncommitted blocks of a failed stream as existing)
// creates the blob through a block commit instead, which checks the
// condition atomically as well.
//
// PutStream stages blocks of BlockSize bytes under ids unique to the call
// and commits the block list with the condition; nothing is visible under
// the key until the commit, and a cancelled stream leaves no blob (Azure
// discards uncommitted blocks). Streams shorter than one block are a single
// Put Blob.
//
// # Listing
//
// The service lists blob names in UTF-16 order (Azure and Azurite alike);
// List yields byte order as the gateway contract requires, re-sorting the
// rare runs of names with characters at or above U+D800, the only ones
// whose two orders differ. Pages hold up to 5,000 names.
//
// # Ranges, pages and copies
//
// The driver implements the optional operations natively (see
// gateway.RangeDriver, PageDriver, CopyDriver): a ranged read is one Get
// Blob with a range (416 InvalidRange for a start at or past the end is an
// empty read); a listing page is one List Blobs request, hierarchical with
// a delimiter, from startFrom (service version 2026-02-06) with max+2
// results; a page that would end on a name the UTF-16 and byte orders
// place differently lists on until that is settled. A copy is Copy Blob
// inside the account, with x-ms-source-if-match for the source version
// and If-None-Match: * or If-Match on the destination, evaluated by the
// service (Azurite as well); a copy still pending (a large blob) is
// waited for.
//
// # Errors
//
// Every error is a *gateway.Error naming the caller's key (without the
// prefix); the *azcore.ResponseError stays reachable with errors.As, and the
// message keeps the status and the service's error code:
//
//   - BlobNotFound, ContainerNotFound, other 404s: gateway.ErrNotFound.
//   - BlobAlreadyExists (Azurite) or ConditionNotMet (Azure) on IfAbsent:
//     gateway.ErrExists. ConditionNotMet on IfMatch: gateway.ErrPrecondition.
//   - AuthenticationFailed, AuthorizationFailure,
//     AuthorizationPermissionMismatch, KeyBasedAuthenticationNotPermitted,
//     InsufficientAccountPermissions, other 401/403s, and credential
//     (token) failures: gateway.ErrPermission; never ErrNotFound.
//   - 408, 429, 5xx, ServerBusy, OperationTimedOut, network errors and
//     context ends: gateway.ErrUnavailable (retryable).
//   - the lease codes (LeaseIdMissing, LeaseAlreadyPresent, ...):
//     gateway.ErrPrecondition; a bare 409 (PendingCopyOperation, no code):
//     gateway.ErrUnavailable, as on every cloud (gateway.StatusKind); 501 and
//     other 4xx: gateway.ErrUnsupported.
//   - IfMatch on a missing key: gateway.ErrPrecondition for Put; Delete of a
//     missing key is gateway.ErrNotFound whatever its condition.
//   - a key whose blob name (prefix included) exceeds Azure's 1,024
//     characters: gateway.ErrInvalidKey, before any request.
//   - a conditional write whose retried outcome could not be read back:
//     gateway.ErrUnknownOutcome (gateway.Refused.Settle).
//
// The Store is a gateway.Bucket over this package's driver: key and
// condition checks, the prefix and the wrapping of errors are the Bucket's.
package azstore

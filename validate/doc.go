// Package validate runs the pre-flight access probes of `ckgate
// validate-access`: it opens a checkpoint store as the job's own principal
// (the same credential chain, flags and environment the job uses) and
// tells, layer by layer, what that principal can do and where it fails.
//
// # Probes
//
// Run reports one Result per probe, in this order; every Result has a
// Status (pass, fail, skip when a probe it depends on failed, unknown when
// it could not tell), the layer, the operation, the provider's error code,
// the gateway error kind, the request id where the SDK gives one, the
// address tried and the duration.
//
//  1. credentials/resolve: which source of the chain won (AWS environment,
//     profile, web identity, assumed role, SSO, container or instance role;
//     Google credentials file, gcloud, metadata server, impersonation;
//     Azure connection string, shared key, SAS with its permissions and
//     expiry, or the Entra ID source: environment, workload identity,
//     managed identity, Azure CLI; the process's uid and gid on a local
//     disk). An expired token or SAS fails here.
//  2. identity/whoami: who the store sees: sts:GetCallerIdentity (at
//     AWS_ENDPOINT_URL_STS if set, at the server itself for an
//     S3-compatible endpoint, where an emulator without STS leaves it
//     unknown with the access key id), the service account email on GCS,
//     the token's object id (oid) and app id on Azure, the account name
//     with a shared key or SAS, uid=N(name) gid=N(name) on a local disk.
//     Options.ExpectPrincipal fails it when no name of the principal
//     matches; the authorization probes then do not run.
//  3. network/dns, network/tcp, network/tls: the endpoint's addresses, the
//     first that accepts a connection (all tried are named when none
//     does) and the TLS handshake with its certificate. Through an HTTP
//     proxy the proxy is probed. Nothing after a network failure runs.
//  4. clock/skew: the local clock against the server's Date header;
//     beyond Options.MaxSkew signed requests are refused, so it fails.
//  5. container/exists: the bucket, container or root directory exists.
//     A refusal (HeadBucket without s3:ListBucket, GCS's objectUser role)
//     is unknown, not a failure; a missing one fails and stops the run.
//  6. authorization: LIST of the root (first page), GET of the existing
//     metadata file if any, PUT of the probe key, create-only PUT of a
//     second probe key twice (the second must be refused: a store that
//     silently overwrites fails with code OVERWRITTEN), compare-and-swap
//     PUT with the current version then with the replaced one (the stale
//     one must be refused: STALE_ACCEPTED otherwise), GET after the write
//     (same bytes, same version), DELETE.
//  7. info: versioning, soft delete and object lock (S3 object lock, GCS
//     retention policy, Azure immutability policy or legal hold) where the
//     data plane can read them; unknown otherwise.
//  8. cleanup/remove probe keys: see below.
//
// Independent probes run concurrently (the network, credentials and
// container probes, the reads and the two write chains); the run against
// a local emulator takes tens of milliseconds.
//
// # Probe keys
//
// The probes write only under PreflightPrefix ("_ckgate/preflight/"): the
// key RUN and RUN.create, where RUN is a timestamp and random text unique
// to the run. Whatever wrote them is removed at the end of every run:
// after a failure, after the timeout, and after cancellation (Ctrl-C),
// when no new probe starts, writes in flight finish and the cleanup runs
// with its own deadline (30 s). A write whose answer was lost counts as
// written; a delete the store was unavailable for is tried again, with
// backoff, until that deadline. When the principal may not delete, the
// cleanup fails and names the keys left behind. On a local disk the run removes
// the directory _ckgate/preflight when it created it and it is empty
// again, and the store keeps its lock files under _ckgate/.ckgate-locks:
// nothing outside _ckgate/ is left. Run as root on a directory of another
// user, the store gives what it creates to the owner of the root directory
// (see package filestore), so that the job's user can still write there;
// the report then warns (Report.Warnings, "Warning:" in the table) that
// the job principal is probably not root and points at --as-user.
//
// # Identity
//
// Identity holds the identity flags of the CLI; each also reads its usual
// environment variable there. AWS: a profile, a role to assume (session
// name, external id) and a web identity token file; GCS: a credentials
// file and a service account to impersonate; Azure: a connection string, a
// SAS token, client and tenant ids and managed identity. Secrets (SAS
// signatures, account keys, connection strings, tokens) are never put in a
// report: messages are redacted before they are stored.
//
// For a local disk, Options.AsUser (NAME or UID[:GID], see ParseUserSpec)
// runs the probes in a child process (Options.Child, a program that calls
// ServeChild: `ckgate validate-access --child`) with that uid, gid and
// the user's supplementary groups, so the kernel's permission checks are
// the job user's even when the caller is root.
//
// # Errors
//
// Run returns an error wrapping ErrUsage, and no report, for a request it
// cannot run: a URL that does not parse, an unknown scheme, identity flags
// that contradict each other or the URL, --as-user on a cloud store, an
// unknown user. A failure to open the store for a reason of the
// credentials layer (a missing profile, an unreadable credentials file)
// is a failed credentials probe instead. When ctx ends during the run,
// Run returns the report of what ran together with ctx's error.
//
// # Reports
//
// WriteReport renders a Report as an aligned table, as JSON
// ({"url","principal","ok","probe_key","warnings","results":[{"layer","operation",
// "result","code","kind","message","request_id","address","duration_ms"}],
// "duration_ms"}) or as JUnit XML, one test case per probe.
package validate

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
// # Errors
//
// Every error a Store returns for a key is an *Error that names the
// operation and the key and matches exactly one kind with errors.Is:
// ErrNotFound, ErrExists, ErrPrecondition, ErrPermission, ErrUnavailable
// (retryable), ErrUnsupported or ErrInvalidKey. The backend's own error
// (an SDK error, a syscall error) stays reachable with errors.As. Sessions
// add ErrFenced, ErrInUse and ErrUnknownOutcome; the authorizer adds
// ErrDenied; GetBounded and Lines add ErrTooLarge.
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
// inputs) are read with ReadRegularFile under the same rules.
//
// # URLs
//
// Open resolves a URL through an explicit Registry (no init-time
// registration): plain paths and file:// URLs name a directory on the local
// disk; the cloud schemes are registered by package stores.
package gateway

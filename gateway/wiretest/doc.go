// Package wiretest runs the stores' conditional-write guarantees through
// internal/faultproxy, between each cloud SDK and its emulator (versitygw,
// fake-gcs-server, Azurite), with the SDK's own retries on and a per-try
// timeout set: a create or a CAS whose first response was lost resolves to
// "this writer won", a lost race stays ErrExists/ErrPrecondition, and an
// outcome that cannot be read back is gateway.ErrUnknownOutcome. It holds
// tests only.
package wiretest

// Package faultproxy is an HTTP reverse proxy for tests that sits between a
// cloud SDK client and its emulator and injects the faults of a real network
// by rule: a response lost after the server applied the request, a
// connection reset before or after forwarding, a 500/503 with the provider's
// own throttling body, a response delayed past the client's per-try timeout,
// a body cut short, and a request forwarded twice.
//
// A Rule picks requests by method, path pattern and the Nth match, or by a
// probability drawn from the proxy's seeded generator, so a run can be
// repeated. Every fault injected is recorded as an Event that the test reads
// back with Events or Counts, to say which faults it survived.
package faultproxy

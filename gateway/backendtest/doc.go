// Package backendtest runs what must hold on every backend side by side —
// the local disk and the S3, GCS and Azure emulators — through the public
// URL opener: the single-writer suite, the request budget of a steady-state
// batch commit counted at the HTTP transport (a counting reverse proxy in
// front of each emulator), and the commit and race benchmarks.
package backendtest

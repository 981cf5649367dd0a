// Package ui draws what a checkpoint records as HTML pages: `ckgate ui`
// serves them, `ckgate report --html` writes them as one self-contained
// file.
//
// It reads nothing itself: checkpoint.Inspect (engine/checkpoint) and the
// audit discovery (policy.Discover, policy.Engine.Audit) read the stores;
// this package turns their reports into pages. Charts are inline SVG drawn
// here (role="img", a <title> and a <desc>, each mirrored by a data table),
// the pages are readable without JavaScript, and nothing on them loads
// from anywhere but the page's own origin.
//
// # Pages
//
//   - Fleet ("/"): every checkpoint under the roots, one row each, sortable
//     and filterable with the view in the URL, and a swim-lane of batches.
//   - Checkpoint ("/c?url=URL"): charts on a shared batch axis, the batch
//     table (paged), state operators, sink and findings.
//
// # Security
//
// Handler answers only loopback clients whose Host header names the
// address it listens on (a DNS-rebinding page cannot read stores through
// it), and only for the roots it was given and what lies under them: any
// other URL is refused with 403 naming it.
package ui

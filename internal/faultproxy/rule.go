package faultproxy

import (
	"net/http"
	"regexp"
	"time"
)

// Kind is a fault the proxy can inject.
type Kind string

const (
	// DropResponse forwards the request (the server applies it), then
	// closes the client's connection without an answer.
	DropResponse Kind = "drop-response"
	// ResetBefore resets the client's connection (TCP RST) without
	// forwarding.
	ResetBefore Kind = "reset-before"
	// ResetAfter forwards the request, then resets the client's connection
	// instead of answering.
	ResetAfter Kind = "reset-after"
	// Busy answers 503 with the provider's throttling body (S3 SlowDown,
	// Azure ServerBusy, GCS backendError) without forwarding.
	Busy Kind = "busy-503"
	// Internal answers 500 with the provider's internal-error body without
	// forwarding.
	Internal Kind = "internal-500"
	// Delay forwards the request and holds the answer for Rule.Delay (set
	// it past the client's per-try timeout); a client that gives up first
	// never sees it.
	Delay Kind = "delay"
	// CutBody forwards the request and sends only the first half of the
	// response body, then closes the connection.
	CutBody Kind = "cut-body"
	// Duplicate forwards the request twice and answers with the second
	// response.
	Duplicate Kind = "duplicate"
)

// Kinds lists every fault kind.
var Kinds = []Kind{DropResponse, ResetBefore, ResetAfter, Busy, Internal, Delay, CutBody, Duplicate}

// Rule selects requests and the fault to inject into them. The zero
// selectors match every request.
type Rule struct {
	Name   string                   // copied into the Events the rule injects
	Method string                   // "" matches every method
	Path   *regexp.Regexp           // matched against the URL path; nil matches all
	Match  func(*http.Request) bool // extra test; nil matches all

	// Nth > 0 fires on the Nth matching request only (1-based). Otherwise
	// Prob > 0 fires on each match with that probability, and Prob == 0
	// fires on every match.
	Nth  int
	Prob float64
	// Max > 0 bounds how often the rule fires.
	Max int
	// Once fires at most once per method, path and query, so the client's
	// own retry of a faulted request gets through.
	Once bool

	// Faults are the kinds to inject; when several are given one is drawn
	// per firing from the proxy's generator.
	Faults []Kind
	// Delay is how long Delay holds the answer (default 30 s).
	Delay time.Duration

	matched int
	fired   int
	done    map[string]bool // requests Once already faulted
}

func (r *Rule) matches(req *http.Request) bool {
	if r.Method != "" && r.Method != req.Method {
		return false
	}
	if r.Path != nil && !r.Path.MatchString(req.URL.Path) {
		return false
	}
	return r.Match == nil || r.Match(req)
}

// Name is k as one word for figure names: "drop_response".
func (k Kind) Name() string {
	b := []byte(k)
	for i, c := range b {
		if c == '-' {
			b[i] = '_'
		}
	}
	return string(b)
}

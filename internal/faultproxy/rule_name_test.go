package faultproxy

import (
	"regexp"
	"testing"
)

// TestEventNamesItsRule: with two rules, each event says which one
// injected it, so a test can count faults per class of request.
func TestEventNamesItsRule(t *testing.T) {
	u := newUpstream(t)
	p := start(t, u, Options{Rules: []*Rule{
		{Name: "writes", Method: "PUT", Faults: []Kind{Busy}},
		{Name: "reads", Path: regexp.MustCompile(`^/b/`), Faults: []Kind{Internal}},
	}})
	do(noRetry(), "PUT", p.URL()+"/b/k", "x")
	do(noRetry(), "GET", p.URL()+"/b/k", "")
	ev := p.Events()
	if len(ev) != 2 || ev[0].Rule != "writes" || ev[0].Kind != Busy || ev[1].Rule != "reads" || ev[1].Kind != Internal {
		t.Fatalf("events %+v, want a busy-503 from rule writes then an internal-500 from rule reads", ev)
	}
}

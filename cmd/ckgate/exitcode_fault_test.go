package main

import (
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/policy"
)

// TestExitCodeFailClosedOnUnavailableStore: the guard refusing a write
// because the store did not answer while it looked for checkpoint roots (a
// fail-closed denial wrapping ErrUnavailable, seen under wire faults) is
// exit 1, retryable, never 4, the policy's verdict; a real denial stays 4.
func TestExitCodeFailClosedOnUnavailableStore(t *testing.T) {
	unavailable := &policy.DeniedError{Action: "put", Path: "_ckgate/writer",
		Violations: []policy.Violation{{ID: policy.RuleFailClosed, Name: "fail-closed", Severity: "deny"}},
		Err:        gateway.E("list", "commits/", gateway.ErrUnavailable, nil)}
	if got := ExitCode(unavailable); got != ExitFailure {
		t.Errorf("ExitCode(fail-closed on an unavailable store) = %d, want %d", got, ExitFailure)
	}
	verdict := &policy.DeniedError{Action: "delete", Path: "commits/3", Violations: []policy.Violation{{ID: "CKG-P001", Severity: "deny"}}}
	if got := ExitCode(verdict); got != ExitDenied {
		t.Errorf("ExitCode(a policy verdict) = %d, want %d", got, ExitDenied)
	}
}

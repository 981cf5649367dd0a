package main

import "testing"

// Duration flags take days (3d) as the spec does; a bad one, or a bare
// number, names the flag (exit 2).
func TestDurationFlagsTakeDays(t *testing.T) {
	root := copyTree(t, "checkpoint-version-4.0.0-checkpoint-v2/rocksdb/dedup")
	ckgate(t, Options{}, "", "retention", "plan", "--retain-for", "3d", "--log-retention", "7d", root).want(t, 0)
	ckgate(t, Options{}, "", "audit", "--outage-window", "3d", root).want(t, 0)
	for _, bad := range []string{"3x", "72", "-1h", "3.5d"} {
		ckgate(t, Options{}, "", "retention", "plan", "--retain-for", bad, root).wantErr(t, ExitUsage, "retain-for")
		ckgate(t, Options{}, "", "audit", "--outage-window", bad, root).wantErr(t, ExitUsage, "outage-window")
		ckgate(t, Options{}, "", "validate-access", "--timeout", bad, root).wantErr(t, ExitUsage, "timeout")
	}
}

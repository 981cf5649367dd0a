package main

import (
	"os"
	"path/filepath"
	"testing"
)

// setTableConfig appends commit 4 to a copy of history-delta-0.2.0 that
// sets the table's configuration (a real ALTER TABLE SET TBLPROPERTIES
// writes such a metaData action with the same id).
func setTableConfig(t *testing.T, table, conf string) {
	t.Helper()
	commit := `{"commitInfo":{"timestamp":1564524400000,"operation":"SET TBLPROPERTIES"}}
{"metaData":{"id":"` + historyID + `","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":` + conf + `,"createdTime":1564524299000}}
`
	if err := os.WriteFile(filepath.Join(table, "_delta_log", "00000000000000000004.json"), []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAuditDeltaRetention(t *testing.T) {
	o := Options{}
	dir := t.TempDir()
	cks := filepath.Join(dir, "checkpoints")
	if err := os.CopyFS(filepath.Join(cks, "reads-history"), os.DirFS(deltaCks+"reads-history")); err != nil {
		t.Fatal(err)
	}
	table := func(name, conf string) string {
		p := filepath.Join(dir, name)
		if err := os.CopyFS(p, os.DirFS(deltaTestTables+"history-delta-0.2.0")); err != nil {
			t.Fatal(err)
		}
		if conf != "" {
			setTableConfig(t, p, conf)
		}
		return p
	}
	defaults := table("defaults", "")
	ckgate(t, o, "", "audit", cks, "--delta", defaults).want(t, 0)

	short := table("short-vacuum", `{"delta.deletedFileRetentionDuration":"interval 24 hours"}`)
	ckgate(t, o, "", "audit", cks, "--delta", short).want(t, 1, "CKG-A012", "deletedFileRetentionDuration", "24 hours")
	ckgate(t, o, "", "audit", cks, "--delta", short, "--outage-window", "12h").want(t, 0)

	shortLog := table("short-log", `{"delta.logRetentionDuration":"interval 2 days"}`)
	ckgate(t, o, "", "audit", cks, "--delta", shortLog).want(t, 1, "CKG-A012", "logRetentionDuration")

	noCleanup := table("no-cleanup", `{"delta.enableExpiredLogCleanup":"false"}`)
	ckgate(t, o, "", "audit", cks, "--delta", noCleanup).want(t, 0, "CKG-A013")
	ckgate(t, o, "", "audit", cks, "--delta", noCleanup, "--fail-on-warn").want(t, 1, "CKG-A013")

	// a table no audited checkpoint reads is not a finding; one that cannot be read is unknown
	other := table("other", `{"delta.deletedFileRetentionDuration":"interval 1 hours"}`)
	if err := os.WriteFile(filepath.Join(cks, "reads-history", "offsets", "1"), []byte("v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1}\n"+`{"sourceVersion":1,"reservoirId":"another-table","reservoirVersion":4,"index":-1,"isStartingVersion":false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ckgate(t, o, "", "audit", cks, "--delta", other).want(t, 0)
	ckgate(t, o, "", "audit", cks, "--delta", deltaTestTables+"no-delta-log-folder").want(t, 1, "CKG-A014", "not a Delta table")
}

// A Delta table under an audited URL is found by the id the checkpoint
// records, without being named.
func TestAuditDeltaTableFoundUnderTarget(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "checkpoints", "reads-history"), os.DirFS(deltaCks+"reads-history")); err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(dir, "tables", "events")
	if err := os.CopyFS(table, os.DirFS(deltaTestTables+"history-delta-0.2.0")); err != nil {
		t.Fatal(err)
	}
	setTableConfig(t, table, `{"delta.deletedFileRetentionDuration":"interval 1 days"}`)
	named := filepath.Join(dir, "other")
	if err := os.CopyFS(named, os.DirFS(deltaTestTables+"snapshot-vacuumed")); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "audit", dir, "--delta", named).want(t, 1, "CKG-A012", "tables/events")
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/lifecycle"
)

// The checkpoints of testdata/delta-checkpoints are built from Delta's
// offset strings (no real Spark checkpoint with a Delta source exists
// here); the tables of testdata/delta were written by Delta.
const (
	deltaCks        = "../../testdata/delta-checkpoints/"
	deltaTestTables = "../../testdata/delta/"
	historyID       = "22ef18ba-191c-4c36-a606-3dad5cdf3830"
)

func gapJSON(t *testing.T, stdout string) *lifecycle.GapReport {
	t.Helper()
	var rep lifecycle.GapReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(rep.Sources) != 1 || rep.Sources[0].Kind != "delta" || rep.Sources[0].Delta == nil {
		t.Fatalf("sources = %+v", rep.Sources)
	}
	return &rep
}

func TestGapDelta(t *testing.T) {
	o := Options{}
	hist := deltaTestTables + "history-delta-0.2.0"
	ckgate(t, o, "", "gap", deltaCks+"reads-history", "--delta", hist).want(t, 0, "table "+hist+": OK", "resumes at version 4")
	r := ckgate(t, o, "", "gap", deltaCks+"reads-history", "--delta", "0="+hist, "--format", "json")
	r.want(t, 0)
	if d := gapJSON(t, r.stdout).Sources[0].Delta; d.Status != "ok" || d.ResumeVersion != 4 || d.LatestVersion != 3 || d.TableID != historyID || d.CheckpointID != historyID {
		t.Errorf("delta = %+v", d)
	}
	if !strings.Contains(r.stdout, `"missing_files": []`) {
		t.Errorf("missing_files is not an empty list:\n%s", r.stdout)
	}

	r = ckgate(t, o, "", "gap", deltaCks+"reads-replaced", "--delta", hist)
	r.want(t, 1, "IDENTITY-CHANGED", historyID, "0f5e3a4b-6c7d-4e8f-9a0b-1c2d3e4f5a6b", "DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE")

	r = ckgate(t, o, "", "gap", deltaCks+"reads-vacuumed", "--delta", deltaTestTables+"snapshot-vacuumed", "--format", "json")
	r.want(t, 1)
	d := gapJSON(t, r.stdout).Sources[0].Delta
	if d.Status != "gap" || d.EarliestVersion != 5 || len(d.MissingFiles) != 1 || d.MissingFiles[0] != "part-00000-d83dafd8-c344-49f0-ab1c-acd944e32493-c000.snappy.parquet" {
		t.Errorf("delta = %+v", d)
	}
	ckgate(t, o, "", "gap", deltaCks+"reads-vacuumed", "--delta", deltaTestTables+"snapshot-vacuumed").want(t, 1, "GAP", "MISSING part-00000-d83dafd8", "added at version 4")

	// usage: no table, a table for another source, two tables for one, not a table
	ckgate(t, o, "", "gap", deltaCks+"reads-history").wantErr(t, 2, "--delta")
	ckgate(t, o, "", "gap", deltaCks+"reads-history", "--delta", "1="+hist).wantErr(t, 2, "--delta")
	ckgate(t, o, "", "gap", deltaCks+"reads-history", "--delta", hist, "--delta", hist).wantErr(t, 2, "two tables")
	ckgate(t, o, "", "gap", deltaCks+"reads-history", "--delta", deltaTestTables+"no-delta-log-folder").wantErr(t, 2, "not a Delta table")
	ckgate(t, o, "", "gap", deltaCks+"reads-history", "--delta", deltaTestTables+"deltalog-invalid-protocol-version").wantErr(t, 2, "reader version 99")
}

// CREATE OR REPLACE on the table the stream reads: the new id and the
// version that wrote it are named.
func TestGapDeltaTableReplaced(t *testing.T) {
	table := filepath.Join(t.TempDir(), "t")
	if err := os.CopyFS(table, os.DirFS(deltaTestTables+"history-delta-0.2.0")); err != nil {
		t.Fatal(err)
	}
	replace := `{"commitInfo":{"timestamp":1564524400000,"operation":"CREATE OR REPLACE TABLE AS SELECT"}}
{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"9e9e9e9e-1111-4222-8333-444444444444","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{},"createdTime":1564524400000}}
`
	if err := os.WriteFile(filepath.Join(table, "_delta_log", "00000000000000000004.json"), []byte(replace), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ckgate(t, Options{}, "", "gap", deltaCks+"reads-history", "--delta", table, "--format", "json")
	r.want(t, 1)
	d := gapJSON(t, r.stdout).Sources[0].Delta
	if d.Status != "identity-changed" || d.TableID != "9e9e9e9e-1111-4222-8333-444444444444" || d.CheckpointID != historyID || d.IDChangedAt == nil || *d.IDChangedAt != 4 {
		t.Errorf("delta = %+v", d)
	}
}

// An Iceberg source (offset and metadata in the shape Iceberg writes; no
// real Iceberg table or checkpoint is available here).
func TestGapIceberg(t *testing.T) {
	dir := t.TempDir()
	ck, table := filepath.Join(dir, "ck"), filepath.Join(dir, "table")
	files := map[string]string{
		filepath.Join(ck, "metadata"):  `{"id":"1b2c3d4e-0000-4000-8000-00000000000a"}`,
		filepath.Join(ck, "offsets/0"): "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1}\n" + `{"version":1,"snapshot_id":2,"position":0,"scan_all_files":false}`,
		filepath.Join(ck, "commits/0"): "v1\n{\"nextBatchWatermarkMs\":0}",
		filepath.Join(table, "metadata/v1.metadata.json"): `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","current-snapshot-id":3,
"snapshots":[{"snapshot-id":2,"timestamp-ms":2},{"snapshot-id":3,"parent-snapshot-id":2,"timestamp-ms":3}]}`,
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{}
	ckgate(t, o, "", "gap", ck, "--iceberg", table).want(t, 0, "OK", "resumes at snapshot 2; current snapshot 3")
	ckgate(t, o, "", "gap", ck).wantErr(t, 2, "--iceberg")
	// expire_snapshots removed snapshot 2
	if err := os.WriteFile(filepath.Join(table, "metadata/v2.metadata.json"), []byte(`{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","current-snapshot-id":3,"snapshots":[{"snapshot-id":3,"timestamp-ms":3}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ckgate(t, o, "", "gap", ck, "--iceberg", "0="+table, "--format", "json")
	r.want(t, 1)
	var rep lifecycle.GapReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Sources) != 1 || rep.Sources[0].Kind != "iceberg" || rep.Sources[0].Iceberg == nil || rep.Sources[0].Iceberg.Status != "gap" {
		t.Fatalf("%+v", rep.Sources)
	}
}

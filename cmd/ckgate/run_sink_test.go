package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway/filestore"
)

// sinkQuery writes rows {"i":from} … {"i":to-1}, one file each, under
// dir/in, and the spec dir/name.yaml of a query reading in (a file a
// batch) into the file sink dir/out.
func sinkQuery(t *testing.T, dir, name, in string, from, to int) string {
	t.Helper()
	for i := from; i < to; i++ {
		p := filepath.Join(dir, in, fmt.Sprintf("f-%03d.jsonl", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, `{"i":%d}`+"\n", i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sp := filepath.Join(dir, name+".yaml")
	spec := fmt.Sprintf("name: %s\nsource: {kind: files, path: %s, max_files_per_batch: 1}\nsink: {kind: files, path: out}\n", name, in)
	if err := os.WriteFile(sp, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return sp
}

// manifestRows returns the "i" of every row in the files the sink's
// _spark_metadata log names (what a Spark reader of the sink sees),
// sorted; entries outside the sink (a copied Spark log's) are skipped.
func manifestRows(t *testing.T, out string) []int {
	t.Helper()
	st, err := filestore.New(out)
	if err != nil {
		t.Fatal(err)
	}
	es, _, err := checkpoint.ReadFileSinkLog(context.Background(), st, checkpoint.SinkMetadataDir)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(out)
	var files []string
	for _, e := range es {
		if p := strings.TrimPrefix(e.Path, "file://"); strings.HasPrefix(p, real+"/") {
			files = append(files, p)
		}
	}
	return sortedRows(t, files)
}

// sortedRows returns the "i" of every row of the JSON-lines files, sorted.
func sortedRows(t *testing.T, files []string) []int {
	t.Helper()
	var got []int
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var r struct{ I int }
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%s: %q: %v", p, l, err)
			}
			got = append(got, r.I)
		}
	}
	slices.Sort(got)
	return got
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// wantSinkRows fails unless the sink dir/out holds exactly the rows want.
func wantSinkRows(t *testing.T, dir string, want []int) {
	t.Helper()
	if got := manifestRows(t, filepath.Join(dir, "out")); !slices.Equal(got, want) {
		t.Fatalf("sink rows %v, want %v", got, want)
	}
}

// wantSinkOwner fails unless the latest record of dir/out's owner log is
// entry n: the query of checkpoint dir/ck, from batch offset on, for a
// reason that says why.
func wantSinkOwner(t *testing.T, dir string, n int64, ck string, offset int64, why string) {
	t.Helper()
	o, got := sinkOwner(t, filepath.Join(dir, "out"))
	if got != n || o.QueryID != testQueryID(t, filepath.Join(dir, ck)) || o.BatchOffset != offset || !strings.Contains(o.Reason, why) {
		t.Fatalf("owner record %+v (entry %d), want %s's query at offset %d (entry %d, %q)", o, got, ck, offset, n, why)
	}
}

// sinkOwner returns the owner log's latest record of dir/out.
func sinkOwner(t *testing.T, out string) (*checkpoint.SinkOwner, int64) {
	t.Helper()
	st, err := filestore.New(out)
	if err != nil {
		t.Fatal(err)
	}
	o, n, err := checkpoint.ReadSinkOwner(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return o, n
}

func testQueryID(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := checkpoint.DecodeStreamMetadata(b)
	if err != nil {
		t.Fatal(err)
	}
	return md.ID
}

// A second query (its own checkpoint) pointed at a file sink another query
// writes is refused before it writes a batch, naming the owner and the way
// out; before owner records, it printed "(sink had it already)" for every
// batch, exited 0 and wrote nothing. With --adopt-sink it takes the sink
// over and its batches go after the old owner's: every row of both runs is
// in the sink, and the old owner is refused from then on.
func TestRunSinkOwnedByAnotherQuery(t *testing.T) {
	dir := t.TempDir()
	sp1 := sinkQuery(t, dir, "q1", "in1", 0, 6)
	runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck1", "--available-now", sp1).want(t, 0)
	q1 := testQueryID(t, filepath.Join(dir, "ck1"))
	if o, n := sinkOwner(t, filepath.Join(dir, "out")); o == nil || n != 0 || o.QueryID != q1 || !strings.HasSuffix(o.Checkpoint, "/ck1") {
		t.Fatalf("owner record %+v (entry %d), want query %s at ck1", o, n, q1)
	}

	sp2 := sinkQuery(t, dir, "q2", "in2", 100, 104)
	r := runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck2", "--available-now", sp2)
	r.wantErr(t, 3, "owned by query "+q1, "/ck1", "--adopt-sink", "fresh-start")
	if strings.Contains(r.stdout, "sink had it already") {
		t.Fatalf("a refused run printed batches:\n%s", r.stdout)
	}
	if files := treeOf(t, filepath.Join(dir, "ck2")); len(files) > 0 {
		t.Fatalf("the refused query wrote into its checkpoint: %v", slices.Sorted(maps.Keys(files)))
	}
	wantSinkRows(t, dir, seq(0, 6))

	r = runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck2", "--available-now", "--adopt-sink", sp2)
	r.want(t, 0, "4 batches")
	if strings.Contains(r.stdout, "sink had it already") {
		t.Fatalf("the adopting query's batches collided with the old manifest:\n%s", r.stdout)
	}
	want := append(seq(0, 6), seq(100, 104)...)
	wantSinkRows(t, dir, want)
	q2 := testQueryID(t, filepath.Join(dir, "ck2"))
	o, n := sinkOwner(t, filepath.Join(dir, "out"))
	if n != 1 || o.QueryID != q2 || o.BatchOffset != 6 || o.From == nil || o.From.QueryID != q1 || !strings.Contains(o.Reason, "--adopt-sink") {
		t.Fatalf("owner record %+v (entry %d), want q2 from q1 at offset 6", o, n)
	}

	// a restart of the new owner goes on after its own batches
	sinkQuery(t, dir, "q2", "in2", 104, 106)
	runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck2", "--available-now", sp2).want(t, 0, "2 batches")
	want = append(want, 104, 105)
	wantSinkRows(t, dir, want)
	// the old owner is refused now, naming the new one
	sinkQuery(t, dir, "q1", "in1", 6, 7)
	runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck1", "--available-now", sp1).wantErr(t, 3, "owned by query "+q2, "/ck2")
}

// --adopt-sink is decided by the policy (action adopt_sink): a rule that
// refuses it stops the run with exit 4 before the sink changes hands.
func TestRunAdoptSinkDecidedByPolicy(t *testing.T) {
	dir := t.TempDir()
	sp1 := sinkQuery(t, dir, "q1", "in1", 0, 2)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck1", "--available-now", sp1).want(t, 0)
	pol := t.TempDir()
	rule := `package ckgate.gateway.rules.no_adoption

import data.ckgate.lib

deny contains lib.violation("ORG-007", sprintf("sink %s changes hands only with a fresh start", [input.location])) if {
	input.action == "adopt_sink"
	input.sink.handover == "adopt-sink"
}
`
	if err := os.WriteFile(filepath.Join(pol, "no_adoption.rego"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	sp2 := sinkQuery(t, dir, "q2", "in2", 100, 101)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck2", "--available-now", "--adopt-sink", "--policy", pol, sp2).
		wantErr(t, 4, "ORG-007", "changes hands only with a fresh start")
	if _, n := sinkOwner(t, filepath.Join(dir, "out")); n != 0 {
		t.Fatalf("a refused adoption wrote owner entry %d", n)
	}
}

// A sink written by an earlier ckgate (no owner record) whose checkpoint's
// plan names it is adopted by that same query at once, batch ids
// unchanged; another query on it is refused like on a Spark sink.
func TestRunSinkWithoutOwnerRecordUpgrade(t *testing.T) {
	dir := t.TempDir()
	sp := sinkQuery(t, dir, "q1", "in1", 0, 3)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck1", "--available-now", sp).want(t, 0)
	// as an earlier ckgate left it: no owner log
	if err := os.RemoveAll(filepath.Join(dir, "out", "_ckgate")); err != nil {
		t.Fatal(err)
	}
	sp2 := sinkQuery(t, dir, "q2", "in2", 100, 101)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck2", "--available-now", sp2).
		wantErr(t, 3, "no ckgate owner record", "_spark_metadata", "--adopt-sink")

	sinkQuery(t, dir, "q1", "in1", 3, 5)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck1", "--available-now", sp).want(t, 0)
	wantSinkRows(t, dir, seq(0, 5))
	wantSinkOwner(t, dir, 0, "ck1", 0, "plan")
}

// A sink Spark wrote (a _spark_metadata log, no owner record) is refused
// unless --adopt-sink; adopted, the query's batches go after Spark's
// latest manifest (9) and Spark's entries stay in the log.
func TestRunSparkSinkNeedsAdoptSink(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "out", checkpoint.SinkMetadataDir), os.DirFS("../../testdata/spark/file-sink-log-version-2.1.0")); err != nil {
		t.Fatal(err)
	}
	sp := sinkQuery(t, dir, "q", "in", 0, 12)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck", "--available-now", sp).
		wantErr(t, 3, "up to batch 9", "no ckgate owner record", "--adopt-sink")
	runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck", "--available-now", "--adopt-sink", sp).want(t, 0, "12 batches")
	wantSinkRows(t, dir, seq(0, 12))
	for _, name := range []string{"10", "18", "19.compact", "21"} {
		if _, err := os.Stat(filepath.Join(dir, "out", checkpoint.SinkMetadataDir, name)); err != nil {
			t.Fatalf("manifest %s: %v", name, err)
		}
	}
	st, _ := filestore.New(filepath.Join(dir, "out"))
	es, latest, err := checkpoint.ReadFileSinkLog(context.Background(), st, checkpoint.SinkMetadataDir)
	if err != nil || latest != 21 || len(es) != 10+12 {
		t.Fatalf("sink log: latest %d, %d files, %v; want 21 and Spark's 10 + 12", latest, len(es), err)
	}
	if o, _ := sinkOwner(t, filepath.Join(dir, "out")); o.BatchOffset != 10 || o.From != nil {
		t.Fatalf("owner record %+v, want offset 10 and no previous owner", o)
	}
}

// The new root of a fresh start takes over the old query's sink without
// --adopt-sink, after the old query's batches: no row is skipped.
func TestRunFreshStartHandsTheSinkOver(t *testing.T) {
	dir := t.TempDir()
	sp := sinkQuery(t, dir, "q", "in", 0, 6)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck", "--available-now", sp).want(t, 0)
	sinkQuery(t, dir, "q", "in", 6, 9)
	runCLI(t, dir, "fresh-start", "--new", "ck2", "--archive-to", "arch", "--reason", "INC-9", "--from-offsets", `{"batch":5}`, "ck").want(t, 0)
	r := runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck2", "--available-now", sp)
	r.want(t, 0, "3 batches")
	wantSinkRows(t, dir, seq(0, 9))
	wantSinkOwner(t, dir, 1, "ck2", 6, "fresh start")
}

// inspect --sink and audit report a checkpoint whose file sink another
// query owns (after a hand-over); the new owner's checkpoint is clean,
// its batches compared with the sink's manifests through its offset.
func TestInspectAndAuditReportSinkOwner(t *testing.T) {
	dir := t.TempDir()
	sp1 := sinkQuery(t, dir, "q1", "in1", 0, 3)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck1", "--available-now", sp1).want(t, 0)
	sp2 := sinkQuery(t, dir, "q2", "in2", 100, 102)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck2", "--available-now", "--adopt-sink", sp2).want(t, 0)
	q2 := testQueryID(t, filepath.Join(dir, "ck2"))

	r := runCLI(t, dir, "inspect", "ck1", "--sink", "out", "--format", "json")
	r.want(t, 0, `"id": "sink-owner-differs"`, q2, "--adopt-sink")
	r = runCLI(t, dir, "inspect", "ck2", "--sink", "out")
	r.want(t, 0, "owner query "+q2)
	for _, bad := range []string{"sink-owner-differs", "sink-ahead"} {
		if strings.Contains(r.stdout, bad) {
			t.Fatalf("the owner's own checkpoint has %s:\n%s", bad, r.stdout)
		}
	}

	r = runCLI(t, dir, "audit", dir, "--format", "json")
	var rep struct {
		Findings []struct{ ID, Resource, Msg string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	var got []string
	for _, f := range rep.Findings {
		if f.ID == "CKG-A011" {
			got = append(got, filepath.Base(f.Resource))
			if !strings.Contains(f.Msg, "owned by query "+q2) {
				t.Fatalf("finding %s", f.Msg)
			}
		}
	}
	if !slices.Equal(got, []string{"ck1"}) {
		t.Fatalf("CKG-A011 on %v, want ck1 only:\n%s", got, r.stdout)
	}
	runCLI(t, dir, "audit", dir, "--fail-on-warn").want(t, 1, "CKG-A011")
}

// `policy eval` decides an adopt_sink input as run does: a job may take a
// sink over, a housekeeping principal may not (CKG-P013).
func TestPolicyEvalAdoptSink(t *testing.T) {
	in := func(kind string) string {
		return `{"action":"adopt_sink","root":"s3://b/ck/q1","location":"s3://b/out","principal":{"id":"p","kind":"` + kind + `"},` +
			`"checkpoint":{"query_id":"q1"},"sink":{"owner":{"query_id":"q0","checkpoint":"s3://b/ck/q0"},"latest_batch":3,"handover":"adopt-sink"}}`
	}
	ckgate(t, Options{}, in("job"), "policy", "eval", "-").want(t, 0)
	ckgate(t, Options{}, in("housekeeping"), "policy", "eval", "-").wantErr(t, 4, "CKG-P013")
}

// Before owner records, a second query on a sink had its batches
// "skipped": its checkpoint's plan names the sink, but the sink holds
// manifests beyond its batches. After the upgrade that query is not
// adopted blindly (its next batch would be skipped again): it is refused,
// and --adopt-sink puts its batches after the sink's; the query whose
// batches the manifests are is adopted.
func TestRunLegacySharedSinkVictimNotAutoAdopted(t *testing.T) {
	dir := t.TempDir()
	sp := sinkQuery(t, dir, "q1", "in1", 0, 1)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck1", "--available-now", sp).want(t, 0)
	// ck2: another query (its own id) whose plan names the same sink and
	// whose batch 0 the old ckgate "skipped" (manifest 0 is q1's)
	if err := os.CopyFS(filepath.Join(dir, "ck2"), os.DirFS(filepath.Join(dir, "ck1"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ck2", "metadata"), []byte(`{"id":"0e4b1b6a-0000-4000-8000-00000000b0b2"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "ck2", "_ckgate", "writer")); err != nil {
		t.Fatal(err)
	}
	sinkQuery(t, dir, "q1", "in1", 1, 3)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck1", "--available-now", sp).want(t, 0)
	if err := os.RemoveAll(filepath.Join(dir, "out", "_ckgate")); err != nil { // as the old ckgate left it
		t.Fatal(err)
	}
	sinkQuery(t, dir, "q1", "in1", 3, 4)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck2", "--available-now", sp).
		wantErr(t, 3, "no ckgate owner record", "--adopt-sink")
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck2", "--available-now", "--adopt-sink", sp).want(t, 0)
	// ck2 read f-001 … f-003 (its batch 0 had f-000): every row is in the sink once per query
	wantSinkRows(t, dir, []int{0, 1, 1, 2, 2, 3})
	if o, _ := sinkOwner(t, filepath.Join(dir, "out")); o.QueryID != "0e4b1b6a-0000-4000-8000-00000000b0b2" || o.BatchOffset != 2 {
		t.Fatalf("owner %+v, want ck2's query at offset 2 (its batch 1 is manifest 3)", o)
	}
}

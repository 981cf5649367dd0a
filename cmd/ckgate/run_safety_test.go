package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The mistakes of a new user's first hour with `ckgate run`, caught before
// they cost data (issue 15, items 2 to 4).

// demoSpecWith is the demo spec with each old → new replacement made.
func demoSpecWith(t *testing.T, dir, name string, repl ...string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, "clickstream-sessions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	for i := 0; i+1 < len(repl); i += 2 {
		if !strings.Contains(s, repl[i]) {
			t.Fatalf("demo spec lacks %q", repl[i])
		}
		s = strings.Replace(s, repl[i], repl[i+1], 1)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A typo'd files source path is refused: never created, nothing written,
// exit 2 naming the path.
func TestRunRefusesMissingSourcePath(t *testing.T) {
	dir, _ := demoDir(t)
	typo := demoSpecWith(t, dir, "typo.yaml", "path: demo/clickstream", "path: demo/clikstream")
	before := snapshotTree(t, dir)
	r := runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck", "--available-now", typo)
	r.wantErr(t, 2, "source.path", "demo/clikstream", "does not exist")
	if strings.Contains(r.stdout, "nothing new") {
		t.Fatalf("a refused run says nothing new:\n%s", r.stdout)
	}
	unchangedTree(t, "run with a missing source path", before, snapshotTree(t, dir))
}

// A first run that read an empty (wrong) directory wrote only metadata
// and the plan: the corrected spec replaces the plan instead of being
// refused as incompatible, and says so.
func TestRunCorrectedSpecReplacesPlanOfEmptyCheckpoint(t *testing.T) {
	dir, sp := demoDir(t)
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	wrong := demoSpecWith(t, dir, "wrong.yaml", "path: demo/clickstream", "path: empty")
	runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck", "--available-now", wrong).want(t, 0, "nothing new")
	// inspect calls it what it is (the operator's metadata is not state)
	runCLI(t, dir, "inspect", "ck").want(t, 0, "EMPTY")
	// compat agrees with run: nothing is built on the recorded plan yet
	runCLI(t, dir, "compat", "ck", "--spec", sp).want(t, 0, "holds no batch yet")
	r := runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck", "--available-now", sp)
	r.want(t, 0, "holds no batch yet", "replaces", "batch 0")
	plan, err := os.ReadFile(filepath.Join(dir, "ck", "_ckgate", "plan.json"))
	if err != nil || !strings.Contains(string(plan), "demo/clickstream") {
		t.Fatalf("plan.json not replaced: %v\n%s", err, plan)
	}
	// once a batch ran, the plan is fixed again
	runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck", "--available-now", wrong).wantErr(t, 1, "source differs")
	if r := runCLI(t, dir, "compat", "ck", "--spec", wrong); r.code != 1 || strings.Contains(r.stdout, "holds no batch yet") {
		t.Fatalf("compat after batches: exit %d\n%s", r.code, r.stdout)
	}
}

// An event-time field or a key field that no row has fails the run before
// offsets/0, naming the field and a sample file; nothing is written.
func TestRunRefusesFieldsNoRowHas(t *testing.T) {
	dir, _ := demoDir(t)
	for _, tc := range []struct{ name, old, new, field string }{
		{"event_time", "event_time: ts", "event_time: tstamp", "tstamp"},
		{"session_key", "keys: [user_id]", "keys: [userid]", "userid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := demoSpecWith(t, dir, tc.name+".yaml", tc.old, tc.new)
			before := snapshotTree(t, dir)
			for _, format := range []string{"text", "json"} {
				r := runCLI(t, dir, "run", "--format", format, "--checkpoint", "ck-"+tc.name, "--available-now", bad)
				r.wantErr(t, 1, `"`+tc.field+`"`, "demo/clickstream/clicks-0000.jsonl")
				if strings.Contains(r.stdout, "nothing new") || strings.Contains(r.stdout, "sessions out") {
					t.Fatalf("a refused run printed a summary of work:\n%s", r.stdout)
				}
				unchangedTree(t, "run with a field no row has", before, snapshotTree(t, dir))
			}
		})
	}
}

// A later batch in which every row lacks a key fails the run (it never
// drops them all silently); the summary says which batch is in flight.
func TestRunFailsBatchWhoseRowsAllLackAKey(t *testing.T) {
	dir, sp := demoDir(t)
	runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck", "--available-now", sp).want(t, 0)
	in := filepath.Join(dir, "demo", "clickstream", "clicks-9999.jsonl")
	os.WriteFile(in, []byte(`{"event_id":"x1","uid":"u1","ts":"2026-01-01T12:00:00Z","page":"/"}`+"\n"+
		`{"event_id":"x2","uid":"u2","ts":"2026-01-01T12:00:01Z","page":"/"}`+"\n"), 0o644)
	r := runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck", "--available-now", sp)
	r.wantErr(t, 1, `"user_id"`, "clicks-9999.jsonl")
	if strings.Contains(r.stdout, "nothing new") {
		t.Fatalf("a failed run says nothing new:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "in flight") || !strings.Contains(r.stdout, "re-runs") {
		t.Fatalf("the summary does not say what the checkpoint shows:\n%s", r.stdout)
	}
}

// closedURL is an http URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/effects"
}

// runSummaryOf is the summary line of a JSON run.
func runSummaryOf(t *testing.T, stdout string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil || m["message_type"] != "summary" {
		t.Fatalf("no summary: %v\n%s", err, stdout)
	}
	return m
}

// A run that fails never says "nothing new … nothing was written": with
// an unreachable sink it says which batch is in flight and what a restart
// does, in text and JSON, and the error names the URL.
func TestRunFailureSummaryIsHonest(t *testing.T) {
	dir, _ := demoDir(t)
	url := closedURL(t)
	hs := demoSpecWith(t, dir, "http.yaml", "sink: {kind: files, path: demo/out/sessions, format: jsonl}",
		"sink: {kind: http, url: '"+url+"', timeout: 1s}")
	for i := 0; i < 2; i++ { // the first attempt, then the re-run
		r := runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck", "--available-now", hs)
		r.wantErr(t, 1, url)
		if strings.Contains(r.stdout, "nothing new") || strings.Contains(r.stdout, "nothing was written") {
			t.Fatalf("attempt %d: a failed run says nothing was written:\n%s", i, r.stdout)
		}
		for _, want := range []string{"failed", "batch 1 is in flight", "a restart re-runs batch 1 with the same offsets"} {
			if !strings.Contains(r.stdout, want) {
				t.Fatalf("attempt %d: stdout lacks %q:\n%s", i, want, r.stdout)
			}
		}
	}
	r := runCLI(t, dir, "run", "--format", "json", "--checkpoint", "ck", "--available-now", hs)
	r.wantErr(t, 1, url)
	sum := runSummaryOf(t, r.stdout)
	st, _ := sum["checkpointState"].(map[string]any)
	if sum["error"] == nil || st == nil || st["inFlightBatch"] != float64(1) || st["latestCommitBatch"] != float64(0) ||
		!strings.Contains(st["restart"].(string), "re-runs batch 1") {
		t.Fatalf("JSON summary does not say what the checkpoint shows:\n%s", r.stdout)
	}
}

// After an in-flight batch's input file was deleted, the re-run fails
// naming the file, and the summary says the batch is still in flight.
func TestRunRerunWithDeletedInputIsHonest(t *testing.T) {
	dir, _ := demoDir(t)
	url := closedURL(t)
	hs := demoSpecWith(t, dir, "http.yaml", "sink: {kind: files, path: demo/out/sessions, format: jsonl}",
		"sink: {kind: http, url: '"+url+"', timeout: 1s}")
	runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck", "--available-now", hs).wantErr(t, 1, url)
	// batch 1 read clicks-0004 to clicks-0007
	if err := os.Remove(filepath.Join(dir, "demo", "clickstream", "clicks-0004.jsonl")); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		r := runCLI(t, dir, "run", "--format", format, "--checkpoint", "ck", "--available-now", hs)
		r.wantErr(t, 2, "clicks-0004.jsonl")
		if strings.Contains(r.stdout, "nothing new") {
			t.Fatalf("a failed re-run says nothing new:\n%s", r.stdout)
		}
		if format == "text" && !strings.Contains(r.stdout, "batch 1 is in flight") {
			t.Fatalf("stdout does not say batch 1 is in flight:\n%s", r.stdout)
		}
		if format == "json" {
			if st, _ := runSummaryOf(t, r.stdout)["checkpointState"].(map[string]any); st == nil || st["inFlightBatch"] != float64(1) {
				t.Fatalf("JSON summary lacks the batch in flight:\n%s", r.stdout)
			}
		}
	}
}

// The rate source's rows hold timestamp, value and key: a spec naming
// another field is refused before anything is written.
func TestRunRefusesRateFieldsNoRowHas(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "rate.yaml")
	os.WriteFile(p, []byte("name: r\nsource: {kind: rate, rows_per_second: 100, keys: 4, total_rows: 300, start: \"2026-01-01T00:00:00Z\"}\n"+
		"event_time: ts\nwatermark: 1s\noperator: {kind: tumbling_window, keys: [key], size: 1s, aggregates: [count]}\nsink: {kind: noop}\n"), 0o644)
	runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck", "--available-now", p).wantErr(t, 1, `event_time "ts"`, "timestamp, value, key")
	if _, err := os.Stat(filepath.Join(dir, "ck")); !os.IsNotExist(err) {
		t.Fatalf("a refused run made its checkpoint: %v", err)
	}
	os.WriteFile(p, []byte(strings.Replace(mustRead(t, p), "event_time: ts", "event_time: timestamp", 1)), 0o644)
	runCLI(t, dir, "run", "--format", "text", "--checkpoint", "ck", "--available-now", p).want(t, 0, "windows out")
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

func inspectJSON(t *testing.T, r result) checkpoint.Report {
	t.Helper()
	var rep checkpoint.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("inspect --format json: %v\n%s", err, r.stdout)
	}
	return rep
}

func findingIDs(rep checkpoint.Report, sev checkpoint.Severity) []string {
	var ids []string
	for _, f := range rep.Findings {
		if f.Severity == sev && !slices.Contains(ids, f.ID) {
			ids = append(ids, f.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestInspectSparkCheckpoints runs inspect on every checkpoint of
// testdata/spark; expectations come from INDEX.md and SPARK-FORMAT.md.
func TestInspectSparkCheckpoints(t *testing.T) {
	type want struct {
		code     int
		status   checkpoint.Status
		L, C     int64 // -1: none
		errors   []string
		warnings []string
		table    []string // substrings of the table output
	}
	clean := func(l int64, table ...string) want {
		return want{status: checkpoint.StatusClean, L: l, C: l, table: table}
	}
	cases := map[string]want{
		// 2.1.0: no commit log, batch 1 in flight; 10 shuffle partitions
		"checkpoint-version-2.1.0": {status: checkpoint.StatusInFlight, L: 1, C: -1,
			table: []string{"IN_FLIGHT", "runs batch 1 (re-run) loading state version 1", "no-commit-log", "10/10", "no commit log"}},
		// SPARK-38033: offsets 0,1,2,4 → "batch 3 doesn't exist"
		"checkpoint-test-offsetId-commitId-inconsistent": {code: 1, status: checkpoint.StatusInconsistent, L: 4, C: 2,
			errors: []string{"offsets-gap-latest"}, table: []string{"INCONSISTENT", "offsets/3", "offsets log 0..2,4", "refused or unsafe"}},
		"checkpoint-version-2.3.1-for-multi-watermark-policy":         clean(1, "0: long 1; 1: long 0", "spark.sql.streaming.multipleWatermarkPolicy", "min  (not recorded"),
		"checkpoint-version-2.3.1-streaming-aggregate-state-format-1": clean(1, "5/5", "yes (5/5)"),
		// commits "v1\n{}": no nextBatchWatermarkMs
		"checkpoint-version-2.3.1-without-commit-log-metadata":             clean(1, "WATERMARK   5000 ms"),
		"checkpoint-version-2.4.0-streaming-join":                          clean(0, "left-keyToNumValues", "right-keyWithIndexToValue", "0: long 0; 1: long 0"),
		"checkpoint-version-2.4.5-for-compatibility-test-common-functions": clean(0, "yes (5/5)"),
		"checkpoint-version-2.4.5-for-compatibility-test-deduplicate":      clean(0, "yes (5/5)"),
		"checkpoint-version-3.0.0-streaming-statestore-codec":              clean(0, "1/1", "spark.sql.streaming.stateStore.compression.codec", "lz4  (not recorded"),
		"checkpoint-version-3.2.0-session-window-with-repartition":         clean(1, "WATERMARK   11000 ms"),
		"checkpoint-version-3.2.0-streaming-aggregate-with-repartition":    clean(1, "yes (5/5)"),
		// schema v2; dedup key _1 string
		"checkpoint-version-3.3.0-streaming-deduplication": clean(1, "v2", "key (_1 string)"),
		// checkpoint format v2: commit log v2, <ver>_<uuid> files, changelog lineage
		"checkpoint-version-4.0.0-checkpoint-v2/rocksdb/dedup": clean(3, "commits v2", "checkpoint format v2", "checkpointFormatVersion=2", "rocksdb"),
		"checkpoint-version-4.0.0-checkpoint-v2/rocksdb/join1": clean(4, "symmetricHashJoin", "left-keyWithIndexToValue", "key (field0 integer not null, index long)"),
		"checkpoint-version-4.0.0-checkpoint-v2/rocksdb/join2": clean(4, "symmetricHashJoin", "commits v2"),
		"checkpoint-version-4.0.0-checkpoint-v2/rocksdb/limit": clean(3, "state-single-partition", "globalLimit"),
		// stale offsets/.0.crc and .1.crc (edited by hand in SPARK-51172)
		"checkpoint-version-4.0.0-tws-unsaferow": {status: checkpoint.StatusClean, L: 1, C: 1, warnings: []string{"checksum-mismatch"},
			table: []string{"checksum-mismatch", "offsets/0", "transformWithStateExec", "unsaferow"}},
		"checkpoint-version-4.0.0/hdfs/agg":      clean(3, "stateStoreSave", "key (_1 integer not null) value (count long not null)"),
		"checkpoint-version-4.0.0/hdfs/dedup":    clean(3, "dedupe"),
		"checkpoint-version-4.0.0/hdfs/join1":    clean(4, "symmetricHashJoin"),
		"checkpoint-version-4.0.0/hdfs/join2":    clean(4, "symmetricHashJoin"),
		"checkpoint-version-4.0.0/hdfs/limit":    clean(3, "state-single-partition"),
		"checkpoint-version-4.0.0/rocksdb/agg":   clean(3, "rocksdb", "stateStoreSave"),
		"checkpoint-version-4.0.0/rocksdb/dedup": clean(3, "rocksdb"),
		"checkpoint-version-4.0.0/rocksdb/join1": clean(4, "rocksdb", "symmetricHashJoin"),
		"checkpoint-version-4.0.0/rocksdb/join2": clean(4, "rocksdb"),
		"checkpoint-version-4.0.0/rocksdb/limit": clean(3, "state-single-partition"),
		// Kafka offsets per partition, initial offsets in sources/0/0
		"kafka/checkpoint-version-2.4.3-kafka-include-headers-default": clean(0, "kafka spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62[0=3 1=3 2=3 3=3 4=3]",
			"initial spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62[0=0 1=0 2=0 3=0 4=0]"),
	}
	dirs := sparkCheckpoints(t)
	if len(dirs) < 20 {
		t.Fatalf("found %d checkpoints under %s", len(dirs), sparkTestdata)
	}
	for _, d := range dirs {
		t.Run(d, func(t *testing.T) {
			w, ok := cases[d]
			if !ok {
				t.Fatalf("no expectation for %s: add one from INDEX.md", d)
			}
			path := filepath.Join(sparkTestdata, filepath.FromSlash(d))
			tab := ckgate(t, Options{}, "", "inspect", path)
			tab.want(t, w.code, append([]string{"QUERY ID", "STATUS", strings.ToUpper(string(w.status)), "FINDINGS"}, w.table...)...)
			js := ckgate(t, Options{}, "", "inspect", "--format", "json", path)
			js.want(t, w.code)
			rep := inspectJSON(t, js)
			if rep.Status != w.status {
				t.Errorf("status %s, want %s", rep.Status, w.status)
			}
			if got := optInt(rep.LatestOffsetsBatch); got != optIntOf(w.L) {
				t.Errorf("latest_offsets_batch %s, want %d", got, w.L)
			}
			if got := optInt(rep.LatestCommitBatch); got != optIntOf(w.C) {
				t.Errorf("latest_commit_batch %s, want %d", got, w.C)
			}
			if got := findingIDs(rep, checkpoint.SeverityError); !slices.Equal(got, w.errors) {
				t.Errorf("error findings %v, want %v", got, w.errors)
			}
			if got := findingIDs(rep, checkpoint.SeverityWarning); !slices.Equal(got, w.warnings) {
				t.Errorf("warning findings %v, want %v", got, w.warnings)
			}
			if rep.Writer.Kind != checkpoint.WriterSpark || rep.QueryID == "" {
				t.Errorf("writer %q, query id %q", rep.Writer.Kind, rep.QueryID)
			}
		})
	}
	for d := range cases {
		if !slices.Contains(dirs, d) {
			t.Errorf("expectation for %s, which is not in %s", d, sparkTestdata)
		}
	}
}

func optIntOf(n int64) string {
	if n < 0 {
		return "-"
	}
	return optInt(&n)
}

// TestInspectJSONKeys: the JSON form has the keys the issue names, with
// arrays (never null) for the lists.
func TestInspectJSONKeys(t *testing.T) {
	r := ckgate(t, Options{}, "", "inspect", "--format", "json", filepath.Join(sparkTestdata, "checkpoint-version-3.3.0-streaming-deduplication"))
	r.want(t, 0)
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"query_id", "writer", "status", "latest_offsets_batch", "latest_commit_batch", "watermark_ms",
		"confs", "batches", "sources", "operators", "findings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	for _, k := range []string{"batches", "sources", "operators", "findings"} {
		if !strings.HasPrefix(string(m[k]), "[") {
			t.Errorf("%q is %s, want an array", k, m[k])
		}
	}
}

// TestInspectBroken breaks copies of real checkpoints the ways an
// on-call engineer meets them.
func TestInspectBroken(t *testing.T) {
	const agg = "checkpoint-version-3.2.0-streaming-aggregate-with-repartition" // offsets 0,1; commits 0,1; p0–4
	for _, tc := range []struct {
		name   string
		src    string
		break_ func(t *testing.T, dir string)
		code   int
		status checkpoint.Status
		finds  []string // finding ids expected (any severity)
		table  []string
	}{
		{"metadata missing (SPARK-55058)", agg, func(t *testing.T, d string) { rm(t, d, "metadata") }, 1, checkpoint.StatusInconsistent,
			[]string{"metadata-missing"}, []string{"INCONSISTENT", "metadata-missing"}},
		{"commit ahead of offsets", agg, func(t *testing.T, d string) { rm(t, d, "offsets/1") }, 1, checkpoint.StatusInconsistent,
			[]string{"commits-ahead"}, []string{"commits-ahead", "commits/1"}},
		{"in flight after a lost commit", agg, func(t *testing.T, d string) { rm(t, d, "commits/1") }, 0, checkpoint.StatusInFlight,
			nil, []string{"IN_FLIGHT", "runs batch 1 (re-run) loading state version 1"}},
		{"zero-byte latest commit", agg, func(t *testing.T, d string) { write(t, d, "commits/1", "") }, 1, "",
			[]string{"zero-byte"}, []string{"ERROR", "zero-byte", "commits/1"}},
		{"state delta needed for the restart removed", agg, func(t *testing.T, d string) { rm(t, d, "state/0/3/2.delta") }, 1, checkpoint.StatusClean,
			[]string{"state-unrebuildable"}, []string{"NO (4/5)", "STATE PARTITIONS THAT CANNOT BE REBUILT", "state-unrebuildable"}},
		{"leftover temp file", agg, func(t *testing.T, d string) { write(t, d, "offsets/.2.tmp", "v1") }, 0, checkpoint.StatusClean,
			[]string{"temp-file"}, []string{"WARNING", "temp-file", "offsets/.2.tmp"}},
		{"unknown offset log version", agg, func(t *testing.T, d string) { write(t, d, "offsets/1", "v99\n{}\n0") }, 1, "",
			[]string{"unsupported-version"}, []string{"unsupported-version", "offsets/1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTree(t, tc.src)
			tc.break_(t, dir)
			r := ckgate(t, Options{}, "", "inspect", dir)
			r.want(t, tc.code, tc.table...)
			if tc.code == 1 && !strings.Contains(r.stderr, "error finding") {
				t.Errorf("stderr does not say why: %s", r.stderr)
			}
			rep := inspectJSON(t, ckgate(t, Options{}, "", "inspect", "--format", "json", dir))
			if tc.status != "" && rep.Status != tc.status {
				t.Errorf("status %s, want %s", rep.Status, tc.status)
			}
			for _, id := range tc.finds {
				if !slices.ContainsFunc(rep.Findings, func(f checkpoint.Finding) bool { return f.ID == id }) {
					t.Errorf("no %s finding in %+v", id, rep.Findings)
				}
			}
		})
	}
}

func rm(t *testing.T, dir, key string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(key))); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, dir, key, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInspectNotACheckpoint(t *testing.T) {
	empty := t.TempDir()
	write(t, empty, "README", "not a checkpoint")
	ckgate(t, Options{}, "", "inspect", empty).wantErr(t, 2, "not a checkpoint")
	ckgate(t, Options{}, "", "inspect", filepath.Join(empty, "nope")).wantErr(t, 2)
	ckgate(t, Options{}, "", "inspect").wantErr(t, 2, "want URL")
	ckgate(t, Options{}, "", "inspect", "--format", "yaml", empty).wantErr(t, 2, "--format")
	ckgate(t, Options{}, "", "inspect", "--batch", "-1", empty).wantErr(t, 2, "--batch -1")
}

func TestInspectBatch(t *testing.T) {
	dir := filepath.Join(sparkTestdata, "checkpoint-version-2.3.1-without-commit-log-metadata")
	r := ckgate(t, Options{}, "", "inspect", "--format", "json", "--batch", "0", dir)
	r.want(t, 0)
	rep := inspectJSON(t, r)
	if len(rep.Batches) != 1 || rep.Batches[0].ID != 0 || rep.Batches[0].WatermarkMs == nil || *rep.Batches[0].WatermarkMs != 0 {
		t.Fatalf("batches %+v, want batch 0 only, watermark 0", rep.Batches)
	}
	// the status still comes from the latest batches
	if rep.Status != checkpoint.StatusClean || *rep.LatestOffsetsBatch != 1 {
		t.Fatalf("status %s L %v", rep.Status, optInt(rep.LatestOffsetsBatch))
	}
	ckgate(t, Options{}, "", "inspect", "--batch", "1", dir).want(t, 0, "BATCHES (1 shown", "1      yes")
	ckgate(t, Options{}, "", "inspect", "--batch", "7", dir).wantErr(t, 2, "batch 7 is not in the checkpoint", "offsets 0..1")
	// a commit-only batch (offsets purged) exists too
	cp := copyTree(t, "checkpoint-version-3.2.0-streaming-aggregate-with-repartition")
	rm(t, cp, "offsets/0")
	r = ckgate(t, Options{}, "", "inspect", "--format", "json", "--batch", "0", cp)
	if rep := inspectJSON(t, r); len(rep.Batches) != 1 || !rep.Batches[0].Committed {
		t.Fatalf("batch 0 of a purged offsets log: %+v", rep.Batches)
	}
}

// TestInspectSink: with --sink, an in-flight batch the file sink already
// wrote is reported as skipped by the re-run.
func TestInspectSink(t *testing.T) {
	cp := filepath.Join(sparkTestdata, "checkpoint-version-2.1.0") // batch 1 in flight
	out := t.TempDir()
	for b, name := range []string{"0", "1"} {
		data, err := checkpoint.EncodeFileSinkLog([]checkpoint.SinkFileStatus{{Path: "file:///out/part-" + name, Size: int64(b + 1), Action: checkpoint.SinkActionAdd}})
		if err != nil {
			t.Fatal(err)
		}
		write(t, out, "_spark_metadata/"+name, string(data))
	}
	ckgate(t, Options{}, "", "inspect", "--sink", out, cp).want(t, 0, "SINK _spark_metadata: latest batch 1, 2 files", "holds batch L already",
		"the file sink already committed batch 1")
	rm(t, out, "_spark_metadata/1")
	ckgate(t, Options{}, "", "inspect", "--sink", out, cp).want(t, 0, "the file sink has not committed batch 1")
}

// TestInspectCkgateCheckpoint: a checkpoint written by `ckgate run` shows
// ckgate's writer record, epoch and plan.
func TestInspectCkgateCheckpoint(t *testing.T) {
	cp := runRateQuery(t, rateSpec)
	r := ckgate(t, Options{}, "", "inspect", cp)
	r.want(t, 0, "WRITER      ckgate (epoch 1", "plan.json sha256:", "released", "CLEAN", "tumblingWindowAggregate", "4/4",
		"spark.sql.shuffle.partitions", "rate value=300")
	rep := inspectJSON(t, ckgate(t, Options{}, "", "inspect", "--format", "json", cp))
	if rep.Writer.Kind != checkpoint.WriterCkgate || rep.Writer.Epoch != 1 || !rep.Writer.Plan {
		t.Fatalf("writer %+v", rep.Writer)
	}
	for _, b := range rep.Batches {
		if b.Epoch != 1 {
			t.Fatalf("batch %d epoch %d, want 1", b.ID, b.Epoch)
		}
	}
}

// rateSpec is a small stateful query over generated rows, four batches.
const rateSpec = `name: rate-counts
source: {kind: rate, rows_per_second: 100, keys: 4, total_rows: 300, start: "2026-01-01T00:00:00Z", max_rows_per_batch: 100}
event_time: timestamp
watermark: 10s
operator: {kind: tumbling_window, keys: [key], size: 1s, aggregates: [count]}
output_mode: append
sink: {kind: noop}
partitions: 4
`

// runRateQuery runs spec with `ckgate run --available-now` into a new
// checkpoint and returns its path; the spec is written beside it as q.yaml.
func runRateQuery(t *testing.T, spec string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "q.yaml", spec)
	cp := filepath.Join(dir, "ck")
	ckgate(t, Options{}, "", "run", "--format", "json", "--available-now", "--checkpoint", cp, filepath.Join(dir, "q.yaml")).want(t, 0)
	return cp
}

func TestInspectPartitionsAndMaxBatches(t *testing.T) {
	cp := filepath.Join(sparkTestdata, "checkpoint-version-3.2.0-streaming-aggregate-with-repartition")
	r := ckgate(t, Options{}, "", "inspect", "--partitions", cp)
	r.want(t, 0, "STATE PARTITIONS\n", "OP  STORE    PART")
	if n := strings.Count(r.stdout, "\n  0   default  "); n != 5 {
		t.Errorf("%d partition lines, want 5:\n%s", n, r.stdout)
	}
	if strings.Contains(ckgate(t, Options{}, "", "inspect", cp).stdout, "STATE PARTITIONS") {
		t.Error("partition lines without --partitions on a healthy checkpoint")
	}
	ckgate(t, Options{}, "", "inspect", "--max-batches", "1", cp).want(t, 0, "BATCHES (1 shown; offsets log holds 2")
	ckgate(t, Options{}, "", "inspect", "--max-batches", "0", cp).wantErr(t, 2, "--max-batches")
}

func TestInspectHelp(t *testing.T) {
	ckgate(t, Options{}, "", "inspect", "--help").want(t, 0, "EXIT STATUS:", "--batch", "--sink", "in_flight", "not a checkpoint")
}

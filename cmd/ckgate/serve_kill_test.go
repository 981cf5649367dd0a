package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/s3serve/s3atrace"
	"github.com/ckgate/ckgate/internal/emulator"
)

// killBatches is how many batches the SIGKILL trace runs.
const killBatches = 3

// TestServeSurvivesSIGKILL: for every step of a 3-batch Spark query's S3A
// trace (each file manager; the default one with the HDFS state store,
// Abortable with RocksDB's, whose SSTs go by multipart upload; purges with
// minBatchesToRetain 1), `ckgate serve` runs as a child process over a
// local store, the trace is replayed up to that step, and serve is
// SIGKILLed the moment the step's first request has been sent. Then:
// `ckgate inspect` (a child, JSON) reports the checkpoint clean or in
// flight, never inconsistent and with no error finding; every log entry
// on disk is whole (it decodes and holds the bytes its driver wrote); the
// logs list no temp. Serve is restarted on the same store and port, the
// query restarted the way Spark does (an in-flight batch re-run from its
// offsets/N), and the checkpoint must end clean at batch 2 with the same
// guarantees.
func TestServeSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the CLI many times")
	}
	every := soakRuns(t, 1) > 1
	for _, m := range s3atrace.Managers {
		t.Run(m.String(), func(t *testing.T) {
			steps := killDriver(t, nil, "", m).Query(killBatches)
			after := map[string]int{} // what the checkpoint was after a kill
			for _, k := range killSteps(steps, every) {
				t.Run(fmt.Sprintf("step%02d", k), func(t *testing.T) { after[serveKillAt(t, m, k)]++ })
			}
			t.Logf("serve SIGKILL %s: %d of %d steps killed; after the kill: %v", m, len(killSteps(steps, every)), len(steps), after)
			soakReport(t, "test", "serve SIGKILL", "cell", m.String(), "steps", len(steps), "kills", len(killSteps(steps, every)),
				"clean", after[string(checkpoint.StatusClean)], "in_flight", after[string(checkpoint.StatusInFlight)],
				"no_checkpoint", after["none"]+after[string(checkpoint.StatusEmpty)], "corrupt", after[string(checkpoint.StatusInconsistent)])
		})
	}
}

// killSteps is the steps to kill serve in: every one under `make soak`
// (CKGATE_SOAK_RUNS > 1), else the first write of each kind on each file
// class (metadata, offsets, commits, state) and the first read (probe,
// LIST) of each kind, which covers every request kind (PUT of a temp,
// COPY, DELETE, conditional PUT, multipart parts and Complete, the purge's
// LIST and DELETEs) in a third of the time.
func killSteps(steps []s3atrace.Step, every bool) []int {
	var ks []int
	seen := map[string]bool{}
	for k, s := range steps {
		class := ""
		for _, c := range []string{"metadata", "offsets", "commits", "state"} {
			if strings.Contains(s.Key, "/"+c) && s.Kind != s3atrace.Probe && s.Kind != s3atrace.List {
				class = c
			}
		}
		if id := string(s.Kind) + " " + class; every || !seen[id] {
			seen[id] = true
			ks = append(ks, k)
		}
	}
	return ks
}

// killOnSend is the drivers' HTTP client: once armed, the next request
// runs kill as soon as it has been written to the connection, before its
// answer is read.
type killOnSend struct {
	hc    *http.Client
	armed atomic.Pointer[func()]
}

func (k *killOnSend) Do(r *http.Request) (*http.Response, error) {
	if f := k.armed.Swap(nil); f != nil {
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { (*f)() }}))
	}
	return k.hc.Do(r)
}

// killDriver is the orders job's driver of checkpoint "q" (bucket ckpt) at
// endpoint with manager m through hc (nil: no client, for counting steps).
func killDriver(t *testing.T, hc aws.HTTPClient, endpoint string, m s3atrace.Manager) *s3atrace.Driver {
	d := &s3atrace.Driver{Bucket: "ckpt", Root: "q", Manager: m, QueryID: "6a3f0b1e-5d2c-4e8f-9a7b-0c1d2e3f4a5b", Partitions: 1, MinBatchesToRetain: 1}
	if m == s3atrace.Abortable {
		d.State, d.Provider = killRocksDBState(t), s3atrace.RocksDBProvider
	}
	if hc != nil {
		d.Client = s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true, HTTPClient: hc,
			Credentials: credentials.NewStaticCredentialsProvider("ORDERSJOB", "orders-s3cr3t-value-0123456789", ""), Retryer: aws.NopRetryer{}})
	}
	return d
}

// killRocksDBState is partition 4 of Spark 4.0.0's RocksDB dedup
// checkpoint (testdata/spark) as every version: its SSTs, then <v>.zip.
func killRocksDBState(t *testing.T) func(p int, v int64) []s3atrace.File {
	t.Helper()
	f, err := s3atrace.RocksDBState(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// serveKillAt is one cell: SIGKILL during step k. It returns the status
// the checkpoint had after the kill ("none": no metadata yet).
func serveKillAt(t *testing.T, m s3atrace.Manager, k int) string {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ckpt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ckpt", "README"), []byte("bucket\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(t.TempDir(), "creds.yaml")
	if err := os.WriteFile(creds, []byte(serveCreds), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := emulator.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	hc := &killOnSend{hc: &http.Client{Timeout: time.Minute}}
	ctx := context.Background()

	srv := startKillServe(t, dir, addr, creds)
	d := killDriver(t, hc, "http://"+addr, m)
	steps := d.Query(killBatches)
	if err := s3atrace.Run(ctx, steps[:k]); err != nil {
		t.Fatalf("replay up to step %d: %v", k, err)
	}
	killed := false
	kill := func() { killed = srv.kill() }
	hc.armed.Store(&kill)
	stepErr := steps[k].Do(ctx)
	if hc.armed.Swap(nil) != nil { // the step sent nothing (a purge with nothing below its threshold)
		kill()
	}
	if !killed {
		t.Fatalf("%s: serve was not killed by the signal (%v)\n%s", steps[k].Name, stepErr, srv.output())
	}
	t.Logf("killed during %s (%s): %v", steps[k].Name, steps[k].Kind, stepErr)
	status := checkKilledCheckpoint(t, dir, d, false)

	srv = startKillServe(t, dir, addr, creds)
	t.Cleanup(func() { srv.kill() })
	restarted := killDriver(t, hc, "http://"+addr, m)
	rest, err := restarted.Resume(ctx, killBatches)
	if err != nil {
		t.Fatal(err)
	}
	if err := s3atrace.Run(ctx, rest); err != nil {
		t.Fatalf("the restarted query after a kill during %s: %v", steps[k].Name, err)
	}
	checkKilledCheckpoint(t, dir, d, true)
	return status
}

// startKillServe starts `ckgate serve` as a child over the local store at
// dir and waits until it listens.
func startKillServe(t *testing.T, dir, addr, creds string) *child {
	t.Helper()
	c := startChildWatching(t, t.TempDir(), nil, []string{"listening on"}, "serve", "--listen", addr, "--store", dir, "--credentials", creds)
	select {
	case <-c.seen("listening on"):
	case <-c.exited:
		t.Fatalf("ckgate serve exited before listening: %v\n%s", c.err, c.output())
	case <-time.After(time.Minute):
		c.kill()
		t.Fatalf("ckgate serve did not listen within a minute:\n%s", c.output())
	}
	return c
}

// checkKilledCheckpoint inspects checkpoint q in dir with `ckgate inspect`
// as a child: clean or in flight (done: clean at the last batch), no error
// finding, every log entry whole, no temp listed as an entry. It returns
// the status ("none" before the query's metadata exists).
func checkKilledCheckpoint(t *testing.T, dir string, d *s3atrace.Driver, done bool) string {
	t.Helper()
	root := filepath.Join(dir, "ckpt", "q")
	if _, err := os.Stat(filepath.Join(root, "metadata")); os.IsNotExist(err) && !done {
		checkNoEntries(t, root)
		return "none" // killed before the query's metadata: no checkpoint yet
	}
	var r checkpoint.Report
	var err error
	if done { // `ckgate inspect` as a child, its JSON report
		cmd := exec.Command(os.Args[0], "inspect", "--format", "json", root)
		cmd.Env = append(os.Environ(), childEnv+"=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err = cmd.Run(); err != nil {
			err = fmt.Errorf("ckgate inspect: %w\n%s", err, stderr.String())
		}
		if jerr := json.Unmarshal(stdout.Bytes(), &r); jerr != nil {
			t.Fatalf("ckgate inspect: %v, %v\n%s\n%s", err, jerr, stdout.String(), stderr.String())
		}
	} else { // the same reader in process (a child costs a second under -race)
		fs, ferr := filestore.New(root)
		if ferr != nil {
			t.Fatal(ferr)
		}
		rp, ierr := checkpoint.Inspect(context.Background(), fs, checkpoint.Options{})
		if ierr != nil {
			t.Fatalf("inspect %s: %v", root, ierr)
		}
		r = *rp
	}
	for _, f := range r.Findings {
		if f.Severity == checkpoint.SeverityError {
			t.Errorf("inspect finding %s %s: %s", f.ID, f.Key, f.Message)
		}
	}
	switch {
	case done && (r.Status != checkpoint.StatusClean || r.LatestCommitBatch == nil || *r.LatestCommitBatch != killBatches-1):
		t.Errorf("after the restart: status %s, latest commit %s; want clean at batch %d", r.Status, batchText(r.LatestCommitBatch), killBatches-1)
	case r.Status != checkpoint.StatusClean && r.Status != checkpoint.StatusInFlight && r.Status != checkpoint.StatusEmpty:
		t.Errorf("status %s, want clean or in flight", r.Status)
	}
	if err != nil {
		t.Error(err)
	}
	if r.QueryID != d.QueryID {
		t.Errorf("query id %q, want %q", r.QueryID, d.QueryID)
	}
	listed := 0
	for _, rg := range r.OffsetsLog.Ranges {
		listed += int(rg[1] - rg[0] + 1)
	}
	if entries := checkEntries(t, root, d); listed != entries["offsets"] {
		t.Errorf("inspect lists %d offsets entries, the store holds %d", listed, entries["offsets"])
	}
	return string(r.Status)
}

// checkNoEntries fails if a log entry exists under root.
func checkNoEntries(t *testing.T, root string) {
	t.Helper()
	for _, log := range []string{"offsets", "commits"} {
		ents, _ := os.ReadDir(filepath.Join(root, log))
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") {
				t.Errorf("%s/%s exists without the query's metadata", log, e.Name())
			}
		}
	}
}

// checkEntries reads every log entry under root: each must decode and hold
// exactly what d writes for its batch (a temp or a cut write never
// becomes an entry). It returns how many entries each log has.
func checkEntries(t *testing.T, root string, d *s3atrace.Driver) map[string]int {
	t.Helper()
	want := map[string]func(int64) []byte{"offsets": d.OffsetsBody, "commits": d.CommitBody}
	counts := map[string]int{}
	for log, body := range want {
		ents, err := os.ReadDir(filepath.Join(root, log))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, e := range ents {
			n, err := strconv.ParseInt(e.Name(), 10, 64)
			if err != nil {
				// Spark's temp (.N.<uuid>.tmp), or the local store's own
				// (.ckgate-tmp-…, hidden from listings) that a kill cut.
				if !strings.HasPrefix(e.Name(), ".ckgate-") && (!strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".tmp")) {
					t.Errorf("%s/%s: neither a log entry nor a temp", log, e.Name())
				}
				continue
			}
			counts[log]++
			data, err := os.ReadFile(filepath.Join(root, log, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if log == "offsets" {
				_, err = checkpoint.DecodeOffsetSeq(data)
			} else {
				_, err = checkpoint.DecodeCommit(data)
			}
			if err != nil || !bytes.Equal(data, body(n)) {
				t.Errorf("%s/%d is not what the driver wrote (%v): %q", log, n, err, data)
			}
		}
	}
	return counts
}

// batchText is a batch id that may be missing.
func batchText(id *int64) string {
	if id == nil {
		return "none"
	}
	return strconv.FormatInt(*id, 10)
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/sink"
	"github.com/ckgate/ckgate/gateway"
)

// Helpers of the process-level tests (SIGKILL soak, concurrent writers):
// `ckgate` as a child process (the test binary re-executed, see TestMain),
// an HTTP receiver that counts effects by idempotency key, and checks of
// the checkpoint log.

// soakRuns is the number of runs per cell of the process-level tests:
// CKGATE_SOAK_RUNS, default def (small, for `make test`).
func soakRuns(t *testing.T, def int) int {
	t.Helper()
	v := os.Getenv("CKGATE_SOAK_RUNS")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("CKGATE_SOAK_RUNS=%q: want a positive number", v)
	}
	return n
}

// soakReport appends one JSON line of fields (name, value, name, value,
// ... in this order) to the file named by CKGATE_SOAK_REPORT; `make soak`
// prints the lines as a table.
var soakReportMu sync.Mutex

func soakReport(t *testing.T, fields ...any) {
	t.Helper()
	name := os.Getenv("CKGATE_SOAK_REPORT")
	if name == "" {
		return
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(fields); i += 2 {
		k, _ := json.Marshal(fields[i])
		v, err := json.Marshal(fields[i+1])
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString("}\n")
	soakReportMu.Lock()
	defer soakReportMu.Unlock()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatalf("CKGATE_SOAK_REPORT: %v", err)
	}
	defer f.Close()
	if _, err := f.Write(b.Bytes()); err != nil {
		t.Fatalf("CKGATE_SOAK_REPORT: %v", err)
	}
}

// child is `ckgate ARGS` running as a child process. Its JSON progress
// lines are announced on progress as they arrive.
type child struct {
	cmd      *exec.Cmd
	progress chan progressEvent // buffered; never blocks the reader
	exited   chan struct{}      // closed once the process is reaped
	waiting  chan struct{}      // closed once it says it waits for a writer's lease
	waitOnce sync.Once
	watches  map[string]*watch // see watchFor
	err      error             // cmd.Wait's error, set before exited closes
	mu       sync.Mutex
	out      strings.Builder // stdout and stderr, interleaved
	events   []progressEvent
}

// progressEvent is what the process-level tests read from a progress line.
type progressEvent struct {
	BatchID int64 `json:"batchId"`
	Ckgate  struct {
		Epoch uint64 `json:"epoch"`
		Rerun bool   `json:"rerun"`
	} `json:"ckgate"`
}

type lineWriter struct{ c *child }

func (w lineWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	w.c.out.Write(p)
	w.c.mu.Unlock()
	if bytes.Contains(p, []byte(leaseWaitMessage)) {
		w.c.waitOnce.Do(func() { close(w.c.waiting) })
	}
	for s, wt := range w.c.watches {
		if bytes.Contains(p, []byte(s)) {
			wt.once.Do(func() { close(wt.seen) })
		}
	}
	return len(p), nil
}

// watch is a text a child's stderr is watched for.
type watch struct {
	seen chan struct{}
	once sync.Once
}

// seen returns a channel closed once the child's stderr carried s (one of
// the texts given to startChildWatching).
func (c *child) seen(s string) <-chan struct{} { return c.watches[s].seen }

// leaseWaitMessage is what `ckgate run` prints when it waits for a live
// writer's lease (run.go's OnWait).
const leaseWaitMessage = "waiting until its lease expires"

// startChild starts the CLI (this test binary in CLI mode) in dir with env
// added to the environment.
func startChild(t *testing.T, dir string, env []string, args ...string) *child {
	t.Helper()
	return startChildWatching(t, dir, env, nil, args...)
}

// startChildWatching is startChild watching its stderr for each of texts
// (see child.seen); a text must arrive in one write.
func startChildWatching(t *testing.T, dir string, env []string, texts []string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	c := &child{cmd: cmd, progress: make(chan progressEvent, 4096), exited: make(chan struct{}), waiting: make(chan struct{}),
		watches: map[string]*watch{}}
	for _, s := range texts {
		c.watches[s] = &watch{seen: make(chan struct{})}
	}
	cmd.Stderr = lineWriter{c}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			c.mu.Lock()
			c.out.WriteString(line + "\n")
			c.mu.Unlock()
			if !strings.HasPrefix(line, `{"message_type":"progress"`) {
				continue
			}
			var ev progressEvent
			if json.Unmarshal([]byte(line), &ev) != nil {
				continue
			}
			c.mu.Lock()
			c.events = append(c.events, ev)
			c.mu.Unlock()
			select {
			case c.progress <- ev:
			default:
			}
		}
		io.Copy(io.Discard, stdout)
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return c
}

// kill sends SIGKILL and waits; it reports whether the signal ended the
// process (false: it had exited on its own before).
func (c *child) kill() bool {
	_ = c.cmd.Process.Kill()
	<-c.exited
	var ee *exec.ExitError
	if errors.As(c.err, &ee) {
		if st, ok := ee.Sys().(interface{ Signaled() bool }); ok && st.Signaled() {
			return true
		}
	}
	return false
}

// wait waits for the process to end, at most d.
func (c *child) wait(t *testing.T, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-c.exited:
	case <-timer.C:
		c.kill()
		t.Fatalf("ckgate %s did not end within %s\n%s", strings.Join(c.cmd.Args[1:], " "), d, c.output())
	}
}

// code is the exit status (-1 when killed by a signal).
func (c *child) code() int { return c.cmd.ProcessState.ExitCode() }

func (c *child) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

func (c *child) progressEvents() []progressEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]progressEvent(nil), c.events...)
}

// effectReceiver is the HTTP endpoint of the http sink in the process
// tests. It deduplicates by record idempotency key, as a real receiver
// must: a key sent again (a retry or a re-run of a chunk) is the same
// effect. A key sent again with another record is a conflict.
type effectReceiver struct {
	mu         sync.Mutex
	records    map[string]string // record key → canonical record JSON
	deliveries int               // records received, retries included
	conflicts  []string
	bad        int // requests without an Idempotency-Key or unreadable
}

func newEffectReceiver(t *testing.T) (*effectReceiver, string) {
	t.Helper()
	rc := &effectReceiver{records: map[string]string{}}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv.URL
}

func (rc *effectReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body sink.HTTPRequest
	data, err := io.ReadAll(r.Body)
	idem := r.Header.Get("Idempotency-Key")
	if err != nil || json.Unmarshal(data, &body) != nil || idem == "" || len(body.Records) == 0 ||
		idem != body.Records[0].Key {
		rc.mu.Lock()
		rc.bad++
		rc.mu.Unlock()
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rec := range body.Records {
		canon, err := canonicalJSON(rec.Record)
		if err != nil {
			rc.bad++
			continue
		}
		rc.deliveries++
		if old, ok := rc.records[rec.Key]; ok {
			if old != canon {
				rc.conflicts = append(rc.conflicts, fmt.Sprintf("%s: %s, then %s", rec.Key, old, canon))
			}
			continue
		}
		rc.records[rec.Key] = canon
	}
	w.WriteHeader(http.StatusNoContent)
}

// effects returns one canonical record per distinct key, sorted.
func (rc *effectReceiver) effects() (rows []string, deliveries int, conflicts []string, bad int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, r := range rc.records {
		rows = append(rows, r)
	}
	sort.Strings(rows)
	return rows, rc.deliveries, append([]string(nil), rc.conflicts...), rc.bad
}

// canonicalJSON re-encodes a JSON object with sorted keys, so that rows
// from the file sink, the http sink and the reference compare as text.
func canonicalJSON(raw []byte) (string, error) {
	var v map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func canonicalRows(t *testing.T, rows []string) []string {
	t.Helper()
	out := make([]string, len(rows))
	for i, r := range rows {
		c, err := canonicalJSON([]byte(r))
		if err != nil {
			t.Fatalf("row %q: %v", r, err)
		}
		out[i] = c
	}
	sort.Strings(out)
	return out
}

// compareRows counts the reference rows missing from got (lost) and the
// rows got holds more often than the reference (duplicated; a row the
// reference does not have at all counts there too).
func compareRows(got, want []string) (lost, duplicated int) {
	n := map[string]int{}
	for _, w := range want {
		n[w]++
	}
	for _, g := range got {
		n[g]--
	}
	for _, c := range n {
		if c > 0 {
			lost += c
		} else {
			duplicated -= c
		}
	}
	return lost, duplicated
}

// fileSinkRows reads what a file sink committed: the files its
// _spark_metadata log names, one row a line.
func fileSinkRows(t *testing.T, out gateway.Store) []string {
	t.Helper()
	ctx := context.Background()
	entries, _, err := checkpoint.ReadFileSinkLog(ctx, out, checkpoint.SinkMetadataDir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var got []string
	for _, e := range entries {
		name := e.Path[strings.LastIndex(e.Path, "/")+1:]
		if seen[name] {
			t.Fatalf("the sink log names %s twice", name)
		}
		seen[name] = true
		data, _, err := out.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for l := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				got = append(got, l)
			}
		}
	}
	return got
}

// logEntry is one offsets/N or commits/N file with its writer epoch.
type logEntry struct {
	batch int64
	epoch uint64
}

// checkLog reads offsets/ and commits/ of a checkpoint and fails the test
// unless: batch ids run from 0 without a gap in both (every id once: a
// store key exists once, and anything else in the directory is a finding),
// commits are a prefix of offsets (at most the last offsets entry without
// its commit; none when complete), and the writer epochs never go down
// along offsets/0, commits/0, offsets/1, commits/1, ... It returns the
// offsets entries.
func checkLog(t *testing.T, st gateway.Store, complete bool) []logEntry {
	t.Helper()
	ctx := context.Background()
	read := func(dir string) []logEntry {
		var es []logEntry
		for a, err := range st.List(ctx, dir+"/") {
			if err != nil {
				t.Fatalf("list %s: %v", dir, err)
			}
			name := strings.TrimPrefix(a.Key, dir+"/")
			n, err := strconv.ParseInt(name, 10, 64)
			if err != nil || strconv.FormatInt(n, 10) != name {
				t.Fatalf("%s holds %q: not a batch id", dir, a.Key)
			}
			data, _, err := st.Get(ctx, a.Key)
			if err != nil {
				t.Fatal(err)
			}
			e, err := gateway.EntryEpoch(a.Key, data)
			if err != nil {
				t.Fatal(err)
			}
			if e == 0 {
				t.Fatalf("%s carries no writer epoch:\n%s", a.Key, data)
			}
			es = append(es, logEntry{n, e})
		}
		sort.Slice(es, func(i, j int) bool { return es[i].batch < es[j].batch })
		for i, e := range es {
			if e.batch != int64(i) {
				t.Fatalf("%s: batch %d where %d belongs (a gap or a double entry): %v", dir, e.batch, i, es)
			}
		}
		return es
	}
	offs, commits := read(checkpoint.OffsetsDir), read(checkpoint.CommitsDir)
	switch d := len(offs) - len(commits); {
	case d < 0 || d > 1:
		t.Fatalf("%d offsets entries, %d commits", len(offs), len(commits))
	case complete && d != 0:
		t.Fatalf("batch %d was logged but never committed", len(offs)-1)
	}
	var last uint64
	for i, o := range offs {
		seq := []logEntry{o}
		if i < len(commits) {
			seq = append(seq, commits[i])
		}
		for j, e := range seq {
			if e.epoch < last {
				t.Fatalf("%s/%d has writer epoch %d after epoch %d: a fenced writer wrote after its successor",
					[]string{"offsets", "commits"}[j], e.batch, e.epoch, last)
			}
			last = e.epoch
		}
	}
	return offs
}

// httpSinkSpec turns the demo spec's file sink into an http sink posting
// to url.
func httpSinkSpec(src, url string) string {
	return strings.Replace(src, "sink: {kind: files, path: demo/out/sessions, format: jsonl}",
		fmt.Sprintf("sink: {kind: http, url: '%s', batch_size: 7, timeout: 5s}", url), 1)
}

// ledgerKeys counts the http sink's ledger entries (a sanity check that
// the ledger, not luck, kept re-runs from re-sending).
func ledgerKeys(t *testing.T, st gateway.Store) int {
	t.Helper()
	n := 0
	for _, err := range st.List(context.Background(), sink.EffectsDir+"/") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

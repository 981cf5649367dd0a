package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/demo"
)

// runCLI runs the CLI in process in dir.
func runCLI(t *testing.T, dir string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	app := App(Options{Stdout: &out, Stderr: &errOut})
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	err := runApp(context.Background(), app, append([]string{"ckgate"}, args...))
	report(&errOut, err)
	return result{code: ExitCode(err), stdout: out.String(), stderr: errOut.String()}
}

// demoDir lays out what `make demo` runs on: the clickstream and the spec.
func demoDir(t *testing.T) (dir, specPath string) {
	t.Helper()
	dir = t.TempDir()
	if _, err := demo.Write(filepath.Join(dir, "demo", "clickstream"), demo.Default()); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../testdata/specs/clickstream-sessions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	specPath = filepath.Join(dir, "clickstream-sessions.yaml")
	if err := os.WriteFile(specPath, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, specPath
}

func TestRunDemoTwice(t *testing.T) {
	dir, sp := demoDir(t)
	r := runCLI(t, dir, "run", "--format", "text", "--checkpoint", "demo/checkpoint", "--available-now", sp)
	r.want(t, 0, "new checkpoint", "late rows dropped", "sessions out", "sessions still open", "output:", "checkpoint: demo/checkpoint")
	outputs := func() map[string]string {
		m := map[string]string{}
		filepath.WalkDir(filepath.Join(dir, "demo", "out"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				m[p] = string(b)
			}
			return nil
		})
		return m
	}
	first := outputs()
	if len(first) < 2 {
		t.Fatalf("output has %d files", len(first))
	}
	r = runCLI(t, dir, "run", "--format", "text", "--checkpoint", "demo/checkpoint", "--available-now", sp)
	r.want(t, 0, "nothing new")
	second := outputs()
	if len(second) != len(first) {
		t.Fatalf("second run changed the output: %d files, then %d", len(first), len(second))
	}
	for k, v := range first {
		if second[k] != v {
			t.Fatalf("second run changed %s", k)
		}
	}
}

func TestRunJSONProgress(t *testing.T) {
	dir, sp := demoDir(t)
	r := runCLI(t, dir, "run", "--checkpoint", "ck", "--batches", "2", sp)
	r.want(t, 0)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 2 progress events and a summary, got:\n%s", r.stdout)
	}
	for i, l := range lines[:2] {
		var p struct {
			MessageType  string           `json:"message_type"`
			BatchID      int64            `json:"batchId"`
			NumInputRows int64            `json:"numInputRows"`
			DurationMs   map[string]int64 `json:"durationMs"`
			EventTime    map[string]string
			Sources      []struct{ StartOffset, EndOffset string }
			StateOps     []struct{ NumRowsTotal int64 } `json:"stateOperators"`
		}
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatal(err)
		}
		if p.MessageType != "progress" || p.BatchID != int64(i) || p.NumInputRows == 0 || p.EventTime["watermark"] == "" ||
			len(p.Sources) != 1 || p.Sources[0].EndOffset == "" || len(p.StateOps) != 1 || p.DurationMs["triggerExecution"] < 0 {
			t.Fatalf("progress event %d: %s", i, l)
		}
	}
	if !strings.Contains(lines[2], `"message_type":"summary"`) || !strings.Contains(lines[2], `"batches":2`) {
		t.Fatalf("summary: %s", lines[2])
	}
}

func TestRunErrors(t *testing.T) {
	dir, sp := demoDir(t)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nsource: {kind: files, path: in, max_file_per_batch: 3}\n"), 0o644)
	runCLI(t, dir, "run", bad).wantErr(t, 2, "source.max_file_per_batch", "did you mean")
	runCLI(t, dir, "run").wantErr(t, 2, "SPEC")
	runCLI(t, dir, "run", "--format", "xml", sp).wantErr(t, 2, "--format")
	runCLI(t, dir, "run", filepath.Join(dir, "missing.yaml")).wantErr(t, 2, "missing.yaml")
	// another query on the same checkpoint is refused
	runCLI(t, dir, "run", "--checkpoint", "ck", "--batches", "1", sp).want(t, 0)
	other := filepath.Join(dir, "other.yaml")
	src, _ := os.ReadFile(sp)
	os.WriteFile(other, []byte(strings.Replace(string(src), "gap: 30m", "gap: 20m", 1)), 0o644)
	runCLI(t, dir, "run", "--checkpoint", "ck", "--batches", "1", other).wantErr(t, 1, "stateful plan changed", "gap_ms")
}

func TestRunServesMetrics(t *testing.T) {
	dir, sp := demoDir(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut bytes.Buffer
	app := App(Options{Stdout: &out, Stderr: &errOut})
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	done := make(chan error, 1)
	go func() {
		done <- runApp(ctx, app, []string{"ckgate", "run", "--checkpoint", "ck", "--metrics-addr", addr, sp})
	}()
	deadline := time.Now().Add(30 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if strings.Contains(body, "ckgate_engine_batches_total 1") || strings.Contains(body, "ckgate_engine_batches_total 2") {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("run ended: %v\n%s%s", err, out.String(), errOut.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	<-done
	for _, want := range []string{"ckgate_engine_input_rows_total", "ckgate_engine_watermark_seconds", "ckgate_engine_batch_phase_seconds_bucket",
		`ckgate_store_requests_total{backend="file",op="put",outcome="ok"}`} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %s:\n%s", want, body)
		}
	}
}

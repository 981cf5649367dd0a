package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/internal/testcert"
)

const serveCreds = `principals:
  - access_key: ORDERSJOB
    secret_key: orders-s3cr3t-value-0123456789
    principal: orders-job
    kind: job
  - access_key: CLEANER
    secret_key: cleaner-s3cr3t-value-0123456789
    principal: nightly-cleanup
    kind: housekeeping
`

// watchedBuffer is a stderr that closes ready once text appears.
type watchedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	text  string
	once  sync.Once
	ready chan struct{}
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.text) {
		w.once.Do(func() { close(w.ready) })
	}
	return len(p), nil
}

func (w *watchedBuffer) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.String() }

// startServe runs `ckgate serve` in process over a new local store holding
// bucket "ckpt" and returns its endpoint, the store directory and a stop
// function that signals it and returns its exit code and stderr.
func startServe(t *testing.T) (endpoint, dir string, stop func() (int, string)) {
	t.Helper()
	return startServeAs(t, serveCreds)
}

// startServeAs is startServe with the credentials file credsYAML and the
// extra serve flags (the endpoint is https:// with --tls-cert).
func startServeAs(t *testing.T, credsYAML string, extra ...string) (endpoint, dir string, stop func() (int, string)) {
	t.Helper()
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ckpt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ckpt", "README"), []byte("bucket\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	endpoint, stop = serveOn(t, dir, credsYAML, extra...)
	return endpoint, dir, stop
}

// serveOn runs `ckgate serve --store storeURL` in process with the
// credentials file credsYAML and the extra serve flags; see startServe.
func serveOn(t *testing.T, storeURL, credsYAML string, extra ...string) (endpoint string, stop func() (int, string)) {
	t.Helper()
	creds := filepath.Join(t.TempDir(), "creds.yaml")
	if err := os.WriteFile(creds, []byte(credsYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := emulator.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	ctx, cancel := context.WithCancel(context.Background())
	errOut := &watchedBuffer{text: "listening on", ready: make(chan struct{})}
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Options{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: errOut},
			append([]string{"ckgate", "serve", "--listen", addr, "--store", storeURL, "--credentials", creds}, extra...))
	}()
	select {
	case <-errOut.ready:
	case code := <-done:
		cancel()
		t.Fatalf("ckgate serve exited %d before listening:\n%s", code, errOut.String())
	}
	stopped := false
	var code int
	stop = func() (int, string) {
		if !stopped {
			stopped = true
			cancel()
			code = <-done
		}
		return code, errOut.String()
	}
	t.Cleanup(func() { stop() })
	if slices.Contains(extra, "--tls-cert") {
		return "https://" + addr, stop
	}
	return "http://" + addr, stop
}

// requireTool finds a client program; missing, the test fails under CI.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		emulator.Require(t, fmt.Errorf("%s: %w: %v", name, emulator.ErrMissing, err))
	}
	return p
}

// clientEnv is the environment of an S3 client signing as key.
func clientEnv(key, secret string) []string {
	return append(os.Environ(), "AWS_ACCESS_KEY_ID="+key, "AWS_SECRET_ACCESS_KEY="+secret, "AWS_DEFAULT_REGION=us-east-1",
		"AWS_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_PAGER=", "AWS_RETRY_MODE=standard", "AWS_MAX_ATTEMPTS=1")
}

func TestServeAWSCLI(t *testing.T) {
	aws := requireTool(t, "aws")
	ep, dir, stop := startServe(t)
	run := func(key, secret string, args ...string) (string, error) {
		cmd := exec.Command(aws, append([]string{"--endpoint-url", ep}, args...)...)
		cmd.Env = clientEnv(key, secret)
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	job := func(args ...string) string {
		t.Helper()
		out, err := run("ORDERSJOB", "orders-s3cr3t-value-0123456789", args...)
		if err != nil {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	body := filepath.Join(t.TempDir(), "body")
	os.WriteFile(body, []byte("v1\n{\"batchWatermarkMs\":0}\n{}\n"), 0o644)
	job("s3api", "put-object", "--bucket", "ckpt", "--key", "q/metadata", "--body", body)
	job("s3api", "put-object", "--bucket", "ckpt", "--key", "q/offsets/.0.abc.tmp", "--body", body)
	job("s3api", "copy-object", "--bucket", "ckpt", "--key", "q/offsets/0", "--copy-source", "ckpt/q/offsets/.0.abc.tmp")
	job("s3api", "delete-object", "--bucket", "ckpt", "--key", "q/offsets/.0.abc.tmp")
	// A second copy onto the committed log entry loses: 412, not 409.
	job("s3api", "put-object", "--bucket", "ckpt", "--key", "q/offsets/.0.def.tmp", "--body", body)
	out, err := run("ORDERSJOB", "orders-s3cr3t-value-0123456789", "s3api", "copy-object", "--bucket", "ckpt", "--key", "q/offsets/0", "--copy-source", "ckpt/q/offsets/.0.def.tmp")
	if err == nil || !strings.Contains(out, "PreconditionFailed") {
		t.Fatalf("second copy onto offsets/0: %v\n%s\nwant PreconditionFailed", err, out)
	}
	got := filepath.Join(t.TempDir(), "got")
	job("s3api", "get-object", "--bucket", "ckpt", "--key", "q/offsets/0", got)
	if b, _ := os.ReadFile(got); string(b) != "v1\n{\"batchWatermarkMs\":0}\n{}\n" {
		t.Fatalf("get-object offsets/0 = %q", b)
	}
	if l := job("s3api", "list-objects-v2", "--bucket", "ckpt", "--prefix", "q/", "--delimiter", "/"); !strings.Contains(l, `"q/offsets/"`) || !strings.Contains(l, `"q/metadata"`) {
		t.Fatalf("list-objects-v2:\n%s", l)
	}
	if l := job("s3", "ls", "s3://ckpt/q/offsets/"); !strings.Contains(l, " 0\n") {
		t.Fatalf("aws s3 ls:\n%s", l)
	}
	job("s3", "cp", body, "s3://ckpt/data/part-0")
	job("s3", "rm", "s3://ckpt/data/part-0")
	job("s3api", "delete-object", "--bucket", "ckpt", "--key", "never/was")
	// A housekeeping principal may not delete a live log entry.
	out, err = run("CLEANER", "cleaner-s3cr3t-value-0123456789", "s3api", "delete-object", "--bucket", "ckpt", "--key", "q/offsets/0")
	if err == nil || !strings.Contains(out, "AccessDenied") || !strings.Contains(out, "CKG-") {
		t.Fatalf("housekeeping delete of offsets/0: %v\n%s\nwant AccessDenied naming the rule", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "q", "offsets", "0")); err != nil {
		t.Fatalf("offsets/0 after the refused delete: %v", err)
	}
	out, err = run("ORDERSJOB", "wrong-secret", "s3api", "list-objects-v2", "--bucket", "ckpt")
	if err == nil || !strings.Contains(out, "SignatureDoesNotMatch") {
		t.Fatalf("wrong secret: %v\n%s", err, out)
	}
	code, stderr := stop()
	if code != 0 {
		t.Fatalf("serve exited %d after the signal:\n%s", code, stderr)
	}
	if strings.Contains(stderr, "s3cr3t") {
		t.Fatalf("a secret reached stderr:\n%s", stderr)
	}
}

const boto3Script = `
import sys, boto3, botocore
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=sys.argv[1], config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
s3.put_object(Bucket="ckpt", Key="b/metadata", Body=b'{"id":"b"}')
s3.put_object(Bucket="ckpt", Key="b/commits/.0.x.tmp", Body=b"v1\n{}\n")
s3.copy_object(Bucket="ckpt", Key="b/commits/0", CopySource={"Bucket": "ckpt", "Key": "b/commits/.0.x.tmp"})
s3.delete_object(Bucket="ckpt", Key="b/commits/.0.x.tmp")
try:
    s3.put_object(Bucket="ckpt", Key="b/commits/0", Body=b"again")
    print("OVERWROTE")
except botocore.exceptions.ClientError as e:
    print("overwrite:", e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"])
r = s3.get_object(Bucket="ckpt", Key="b/commits/0", Range="bytes=0-1")
print("range:", r["Body"].read().decode())
keys = [o["Key"] for o in s3.list_objects_v2(Bucket="ckpt", Prefix="b/")["Contents"]]
print("keys:", ",".join(keys))
d = s3.delete_objects(Bucket="ckpt", Delete={"Objects": [{"Key": "b/none"}, {"Key": "b/commits/.gone.tmp"}]})
print("deleted:", len(d.get("Deleted", [])))
`

func TestServeBoto3(t *testing.T) {
	py := requireTool(t, "python3")
	if err := exec.Command(py, "-c", "import boto3").Run(); err != nil {
		emulator.Require(t, fmt.Errorf("boto3: %w: %v", emulator.ErrMissing, err))
	}
	ep, _, _ := startServe(t)
	cmd := exec.Command(py, "-c", boto3Script, ep)
	cmd.Env = clientEnv("ORDERSJOB", "orders-s3cr3t-value-0123456789")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("boto3: %v\n%s", err, out)
	}
	for _, want := range []string{"overwrite: PreconditionFailed 412", "range: v1", "keys: b/commits/0,b/metadata", "deleted: 2"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("boto3 output lacks %q:\n%s", want, out)
		}
	}
}

// TestServeBoto3TLS: boto3 over HTTPS sends PutObject as an aws-chunked
// upload with a trailing checksum (it does not over plain HTTP); the
// object stored is the payload.
func TestServeBoto3TLS(t *testing.T) {
	py := requireTool(t, "python3")
	if err := exec.Command(py, "-c", "import boto3").Run(); err != nil {
		emulator.Require(t, fmt.Errorf("boto3: %w: %v", emulator.ErrMissing, err))
	}
	cert, key, _ := testcert.Write(t)
	ep, dir, _ := startServeAs(t, serveCreds, "--tls-cert", cert, "--tls-key", key)
	cmd := exec.Command(py, "-c", boto3TLSScript, ep, cert)
	cmd.Env = clientEnv("ORDERSJOB", "orders-s3cr3t-value-0123456789")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("boto3 over TLS: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "chunked: True") {
		t.Fatalf("boto3 did not send a chunked upload with a trailer, so this tests nothing:\n%s", out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "ckpt", "q", "state", "0", "0", "1.delta"))
	if err != nil || string(got) != strings.Repeat("s", 300000) {
		t.Fatalf("stored %d bytes (%v), want the 300000-byte payload\n%s", len(got), err, out)
	}
}

const boto3TLSScript = `
import sys, boto3
from botocore.config import Config
seen = []
s3 = boto3.client("s3", endpoint_url=sys.argv[1], verify=sys.argv[2],
    config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}, request_checksum_calculation="when_supported"))
def check(request, **kw):
    h = {k.lower(): (v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()}
    seen.append("aws-chunked" in h.get("content-encoding", "") and "x-amz-trailer" in h)
s3.meta.events.register("before-send.s3.PutObject", check)
s3.put_object(Bucket="ckpt", Key="q/state/0/0/1.delta", Body=b"s" * 300000, ChecksumAlgorithm="CRC32")
print("chunked:", any(seen))
`

// TestServeMetricsAndReadiness: --metrics-addr serves /ready (200 while
// serving, refused once stopped) and Prometheus metrics counting requests
// and decisions; --access-log writes a JSON line per request.
func TestServeMetricsAndReadiness(t *testing.T) {
	port, err := emulator.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	maddr := fmt.Sprintf("127.0.0.1:%d", port)
	alog := filepath.Join(t.TempDir(), "access.jsonl")
	ep, _, stop := startServeAs(t, serveCreds, "--metrics-addr", maddr, "--access-log", alog)
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + maddr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/ready"); code != 200 {
		t.Fatalf("/ready while serving: %d %s", code, body)
	}
	if resp, err := http.Get(ep + "/ckpt/none"); err == nil {
		resp.Body.Close() // an unsigned request: refused, and counted
	}
	code, body := get("/metrics")
	if code != 200 || !strings.Contains(body, "ckgate_serve_requests_total") || !strings.Contains(body, "ckgate_serve_request_seconds") {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	stop()
	if code, _ := get("/ready"); code == 200 {
		t.Fatal("/ready answers 200 after the server stopped")
	}
	data, err := os.ReadFile(alog)
	if err != nil || !strings.Contains(string(data), `"operation":"GetObject"`) || !strings.Contains(string(data), `"key":"none"`) {
		t.Fatalf("access log %q: %v", data, err)
	}
}

func TestServeRefusesReadableCredentials(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "creds.yaml")
	if err := os.WriteFile(creds, []byte(serveCreds), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ckgate(t, Options{}, "", "serve", "--listen", "127.0.0.1:1", "--store", t.TempDir(), "--credentials", creds)
	r.wantErr(t, 2, creds, "0644", "chmod 600")
	if strings.Contains(r.stderr, "s3cr3t") {
		t.Fatalf("a secret reached stderr:\n%s", r.stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("principals:\n  - access_key: K\n    secret_key: s3cr3t-x\n    principal: p\n    kind: janitor\n"), 0o600)
	r = ckgate(t, Options{}, "", "serve", "--listen", "127.0.0.1:1", "--store", t.TempDir(), "--credentials", bad)
	r.wantErr(t, 2, "janitor", "access key K")
	if strings.Contains(r.stderr, "s3cr3t") {
		t.Fatalf("a secret reached stderr:\n%s", r.stderr)
	}
}

func TestServeDryRunNeedsDecisionLog(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "creds.yaml")
	if err := os.WriteFile(creds, []byte(serveCreds), 0o600); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "serve", "--dry-run", "--listen", "127.0.0.1:1", "--store", t.TempDir(), "--credentials", creds).
		wantErr(t, 2, "--dry-run needs --decision-log")
}

// TestServeVersitygwSuite runs versitygw's own integration tests (the
// list in testdata/serve-versitygw-tests.txt: those of the groups that
// apply that ckgate serve passes) against ckgate serve over the local
// disk, two at once, each on an emptied store (see runSuite; the emulator
// backends are TestServeBackendsVersitygwSuite).
func TestServeVersitygwSuite(t *testing.T) {
	bin, err := emulator.Find("versitygw", "bin/versitygw")
	emulator.Require(t, err)
	names := suiteList(t)
	start := time.Now()
	failed := runSuite(t, bin, names, []string{t.TempDir(), t.TempDir()})
	t.Logf("%d of %d versitygw suite tests passed in %s", len(names)-failed, len(names), time.Since(start).Round(time.Second))
}

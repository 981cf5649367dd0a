package s3serve_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ckgate/ckgate/gateway/s3serve"
	"github.com/ckgate/ckgate/internal/testcert"
)

// TestServeTLSChunkedTrailingChecksum: over HTTPS the SDK sends PutObject
// as an aws-chunked upload with a trailing CRC32 checksum; the stored
// object is the payload, byte for byte.
func TestServeTLSChunkedTrailingChecksum(t *testing.T) {
	certFile, keyFile, pool := testcert.Write(t)
	dir := bucketDir(t)
	ep := serveStore(t, dir, nil, func(c *s3serve.Config) { c.TLSCert, c.TLSKey = certFile, keyFile })
	if !strings.HasPrefix(ep, "https://") {
		t.Fatalf("endpoint %s", ep)
	}
	var sawTrailer bool
	var mu sync.Mutex
	hc := &http.Client{Transport: &recordingTransport{base: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, seen: func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") && r.Header.Get("X-Amz-Trailer") != "" {
			sawTrailer = true
		}
	}}}
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep), UsePathStyle: true, HTTPClient: hc,
		Credentials: credentials.NewStaticCredentialsProvider("ORDERSJOB", "orders-secret-0123456789", ""), Retryer: aws.NopRetryer{}})
	ctx := context.Background()
	body := bytes.Repeat([]byte("state-bytes-"), 100_000) // 1.2 MB: several chunks
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/state/0/0/1.delta"),
		Body: bytes.NewReader(body), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32}); err != nil {
		t.Fatalf("put over TLS: %v", err)
	}
	if !sawTrailer {
		t.Fatal("the SDK did not send an aws-chunked upload with a trailer: the test does not test it")
	}
	got, err := os.ReadFile(filepath.Join(dir, "ckpt", "q1", "state", "0", "0", "1.delta"))
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("stored %d bytes (%v), want the %d payload bytes", len(got), err, len(body))
	}
	// Plain HTTP to the TLS port is refused, not served.
	plain := client(strings.Replace(ep, "https://", "http://", 1), "ORDERSJOB", "orders-secret-0123456789")
	if _, err := plain.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("ckpt")}); err == nil {
		t.Fatal("plain HTTP answered on the TLS port")
	}
}

type recordingTransport struct {
	base http.RoundTripper
	seen func(*http.Request)
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.seen(req)
	return r.base.RoundTrip(req)
}

// TestServeVirtualHost: BUCKET.DOMAIN requests reach the bucket as
// path-style ones do.
func TestServeVirtualHost(t *testing.T) {
	dir := bucketDir(t)
	ep := serveStore(t, dir, nil, func(c *s3serve.Config) { c.VirtualHost = "s3.ckgate.test" })
	port := ep[strings.LastIndexByte(ep, ':')+1:]
	dialer := &net.Dialer{}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(addr)
		if !strings.HasSuffix(host, "s3.ckgate.test") {
			t.Errorf("dial %s: not a virtual host of s3.ckgate.test", addr)
		}
		return dialer.DialContext(ctx, network, "127.0.0.1:"+port)
	}}}
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://s3.ckgate.test:" + port), UsePathStyle: false, HTTPClient: hc,
		Credentials: credentials.NewStaticCredentialsProvider("ORDERSJOB", "orders-secret-0123456789", ""), Retryer: aws.NopRetryer{}})
	ctx := context.Background()
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/offsets/.0.tmp"), Body: strings.NewReader("v1")}); err != nil {
		t.Fatalf("virtual-host put: %v", err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/offsets/.0.tmp")})
	if err != nil {
		t.Fatalf("virtual-host get: %v", err)
	}
	b, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(b) != "v1" {
		t.Fatalf("got %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "q1", "offsets", ".0.tmp")); err != nil {
		t.Fatalf("not stored in bucket ckpt: %v", err)
	}
}

// TestServeAccessLogAndMetrics: every request is one JSON line naming the
// principal, the operation, the key, the decision and the latency, with no
// secret; the metrics count operations and decisions.
func TestServeAccessLogAndMetrics(t *testing.T) {
	dir := bucketDir(t)
	var buf syncBuffer
	reg := prometheus.NewRegistry()
	ep := serveStore(t, dir, nil, func(c *s3serve.Config) { c.AccessLog, c.Metrics = &buf, reg })
	ctx := context.Background()
	job := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	if err := s3aCommit(ctx, job, "q1/metadata", `{"id":"q1"}`, "m"); err != nil {
		t.Fatal(err)
	}
	hk := client(ep, "CLEANER", "cleaner-secret-0123456789")
	if _, err := hk.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/metadata")}); status(err) != 403 {
		t.Fatalf("housekeeping delete: %v", err)
	}
	var recs []s3serve.AccessRecord
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var r s3serve.AccessRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("access log line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	find := func(op, key string) s3serve.AccessRecord {
		for _, r := range recs {
			if r.Operation == op && r.Key == key {
				return r
			}
		}
		t.Fatalf("no %s of %s in the access log:\n%s", op, key, buf.String())
		return s3serve.AccessRecord{}
	}
	if r := find("CopyObject", "q1/metadata"); r.Principal != "orders-job" || r.Kind != "job" || r.Decision != "allow" || r.Status != 200 || r.Bucket != "ckpt" {
		t.Fatalf("copy record %+v", r)
	}
	if r := find("DeleteObject", "q1/metadata"); r.Principal != "nightly-cleanup" || r.Decision != "deny" || r.Status != 403 {
		t.Fatalf("refused delete record %+v", r)
	}
	find("PutObject", "q1/.metadata.m.tmp")
	for _, secret := range []string{"orders-secret", "cleaner-secret", "Signature="} {
		if strings.Contains(buf.String(), secret) {
			t.Fatalf("the access log holds %q", secret)
		}
	}
	if n := testutil.ToFloat64(mustCounter(t, reg, "ckgate_serve_decisions_total", map[string]string{"operation": "DeleteObject", "decision": "deny"})); n != 1 {
		t.Fatalf("deny decisions for DeleteObject = %v, want 1", n)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}
func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }

// mustCounter finds the counter of name with labels in reg.
func mustCounter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := true
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					match = false
				}
			}
			if match {
				c := prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})
				c.Add(m.GetCounter().GetValue())
				return c
			}
		}
	}
	t.Fatalf("no %s%v in the registry", name, labels)
	return nil
}

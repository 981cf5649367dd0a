package s3serve_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/policy"
)

// pattern is an endless deterministic byte stream: an upload read from it
// holds nothing in memory on the client side.
type pattern struct{ i byte }

func (p *pattern) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = p.i
		p.i++
	}
	return len(b), nil
}

// procStatus reads a kB figure of /proc/self/status (VmRSS, VmHWM).
func procStatus(b *testing.B, field string) int64 {
	b.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n << 10
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// streamPut uploads size bytes read from a stream (unsigned payload, so
// the SDK neither buffers nor hashes it) and returns how long it took.
func streamPut(b *testing.B, c *s3.Client, key string, size int64) time.Duration {
	b.Helper()
	start := time.Now()
	_, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(key),
		Body: io.LimitReader(&pattern{}, size), ContentLength: aws.Int64(size)},
		s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware))
	if err != nil {
		b.Fatalf("stream %s: %v", key, err)
	}
	return time.Since(start)
}

// BenchmarkServeStreamedUpload uploads 64 MiB through the front door over
// the local disk and directly to versitygw's posix backend on the same
// disk, side by side, and the peak RSS growth of this process (server and
// a client that holds nothing: an upper bound on the server's) during the
// front-door upload.
func BenchmarkServeStreamedUpload(b *testing.B) {
	const size = 64 << 20
	direct, front := directAndFront(b)
	streamPut(b, front, "warm", 1<<20) // connections, guard, policy compiled
	runtime.GC()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatalf("resetting the peak RSS: %v", err)
	}
	rss := procStatus(b, "VmRSS")
	b.ResetTimer()
	var dFront, dDirect time.Duration
	for i := range max(1, b.N) {
		dFront += streamPut(b, front, fmt.Sprintf("q/state/0/0/%d.zip", i+1), size)
		if i == 0 {
			growth := procStatus(b, "VmHWM") - rss
			benchsum.Record(b, "serve_stream_64m_rss_growth", float64(growth)/(1<<20), "MiB", "<32")
		}
		dDirect += streamPut(b, direct, fmt.Sprintf("q/state/0/0/%d.zip", i+1), size)
	}
	b.StopTimer()
	mibs := func(d time.Duration) float64 { return float64(size) * float64(max(1, b.N)) / (1 << 20) / d.Seconds() }
	benchsum.Record(b, "serve_stream_64m_throughput_vs_versitygw_posix", mibs(dFront)/mibs(dDirect), "ratio", ">=0.8")
	benchsum.Record(b, "serve_stream_64m_throughput", mibs(dFront), "MiB/s", "-")
}

// BenchmarkServeDecisions replays the store calls of the S3A trace
// (temp PUT, create-only PUT, temp DELETE for offsets/N and commits/N,
// and Spark's purge of the batch minBatchesToRetain=10 behind) through
// the guard a front-door principal gets, over an in-memory store, on one
// core: every call is one policy decision.
func BenchmarkServeDecisions(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	eng, err := policy.New(ctx, policy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	raw := memstore.New()
	var decisions int64
	counted := gateway.Intercept(raw, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
		if c.Op.Mutates() {
			decisions++
		}
		return next(ctx)
	})
	g, _, err := policy.Guard(counted, policy.GuardConfig{Engine: eng, Principal: policy.Principal{ID: "orders-job", Kind: policy.KindJob},
		StoreURL: "s3://bench", WriterSession: true, RootOwners: true})
	if err != nil {
		b.Fatal(err)
	}
	step := func(key string, data []byte) {
		i := strings.LastIndex(key, "/")
		tmp := key[:i+1] + "." + key[i+1:] + ".uuid.tmp"
		if _, err := g.Put(ctx, tmp, data, gateway.None()); err != nil {
			b.Fatalf("put %s: %v", tmp, err)
		}
		if _, err := g.Put(ctx, key, data, gateway.IfAbsent()); err != nil {
			b.Fatalf("put %s: %v", key, err)
		}
		if err := g.Delete(ctx, tmp, gateway.None()); err != nil {
			b.Fatalf("delete %s: %v", tmp, err)
		}
	}
	step("ckpt/q/metadata", []byte(`{"id":"q"}`))
	batches := max(300, b.N)
	decisions = 0
	b.ResetTimer()
	start := time.Now()
	for n := range batches {
		step(fmt.Sprintf("ckpt/q/offsets/%d", n), []byte("v1\n{}\n"))
		step(fmt.Sprintf("ckpt/q/commits/%d", n), []byte("v1\n{}\n"))
		if n >= 10 {
			for _, log := range []string{"offsets", "commits"} {
				if err := g.Delete(ctx, fmt.Sprintf("ckpt/q/%s/%d", log, n-10), gateway.None()); err != nil {
					b.Fatalf("purge %s/%d: %v", log, n-10, err)
				}
			}
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	benchsum.Record(b, "serve_s3a_decisions_per_sec_1core", float64(decisions)/elapsed.Seconds(), "decisions/s", ">=5000")
	benchsum.Record(b, "serve_s3a_decisions_per_batch", float64(decisions)/float64(batches), "decisions/batch", "-")
}

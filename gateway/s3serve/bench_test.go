package s3serve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/internal/emulator"
)

// p50 is the median latency of n runs of f.
func p50(b *testing.B, n int, f func(i int) error) time.Duration {
	b.Helper()
	d := make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		if err := f(i); err != nil {
			b.Fatal(err)
		}
		d[i] = time.Since(start)
	}
	slices.Sort(d)
	return d[n/2]
}

// putGet measures the p50 of 4 KiB PUTs and GETs through c into bucket.
func putGet(b *testing.B, c *s3.Client, bucket string, n int) (put, get time.Duration) {
	ctx := context.Background()
	body := bytes.Repeat([]byte("x"), 4096)
	put = p50(b, n, func(i int) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(fmt.Sprintf("bench/%d", i)), Body: bytes.NewReader(body)})
		return err
	})
	get = p50(b, n, func(i int) error {
		o, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(fmt.Sprintf("bench/%d", i))})
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, o.Body)
		o.Body.Close()
		return err
	})
	return put, get
}

// directAndFront starts a versitygw posix backend holding bucket "ckpt"
// and a front door over the local disk: clients of both, to compare side
// by side (versitygw is stopped when b ends).
func directAndFront(b *testing.B) (direct, front *s3.Client) {
	vg, err := emulator.StartVersitygw(context.Background())
	emulator.Require(b, err)
	b.Cleanup(vg.Stop)
	direct = client(vg.Endpoint, vg.AccessKey, vg.SecretKey)
	if _, err := direct.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("ckpt")}); err != nil {
		b.Fatal(err)
	}
	ep, _ := serve(b)
	return direct, client(ep, "ORDERSJOB", "orders-secret-0123456789")
}

// BenchmarkServeLatency measures 4 KiB PUT and GET p50 through ckgate
// serve over the local disk beside versitygw's posix backend over the same
// disk (the library ckgate serve is built on, without ckgate's backend and
// guard), side by side in one run.
func BenchmarkServeLatency(b *testing.B) {
	direct, front := directAndFront(b)
	n := max(300, b.N)
	b.ResetTimer()
	vPut, vGet := putGet(b, direct, "ckpt", n)
	cPut, cGet := putGet(b, front, "ckpt", n)
	b.StopTimer()
	benchsum.Record(b, "serve_put_4k_p50_vs_versitygw_posix", float64(cPut)/float64(vPut), "ratio", "<=1.3")
	benchsum.Record(b, "serve_get_4k_p50_vs_versitygw_posix", float64(cGet)/float64(vGet), "ratio", "<=1.3")
	benchsum.Record(b, "serve_put_4k_p50", float64(cPut.Microseconds()), "µs", "-")
	benchsum.Record(b, "serve_get_4k_p50", float64(cGet.Microseconds()), "µs", "-")
}

// BenchmarkServeS3ABatchRequests counts what the store sees for one
// micro-batch's S3A commits through the front door (offsets/N and
// commits/N, each a temp PUT, a COPY and a DELETE), beside what the client
// sends.
func BenchmarkServeS3ABatchRequests(b *testing.B) {
	var reads, writes atomic.Int64
	count := func(s gateway.Store) gateway.Store {
		return gateway.Intercept(s, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
			if c.Op.Mutates() {
				writes.Add(1)
			} else {
				reads.Add(1)
			}
			return next(ctx)
		})
	}
	ep, _ := serveWrapped(b, count)
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	if err := s3aCommit(ctx, c, "q/metadata", `{"id":"q"}`, "m"); err != nil {
		b.Fatal(err)
	}
	batches := max(20, b.N)
	b.ResetTimer()
	reads.Store(0)
	writes.Store(0)
	for n := range batches {
		for _, log := range []string{"offsets", "commits"} {
			if err := s3aCommit(ctx, c, fmt.Sprintf("q/%s/%d", log, n), "v1\n{}\n", fmt.Sprint(n)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	const clientWrites = 6 // 2 × (PUT temp, COPY, DELETE temp)
	perBatch := func(v int64) float64 { return float64(v) / float64(batches) }
	benchsum.Record(b, "serve_s3a_batch_client_writes", clientWrites, "req/batch", "-")
	benchsum.Record(b, "serve_s3a_batch_backend_writes", perBatch(writes.Load()), "req/batch", fmt.Sprintf("<=%d", clientWrites))
	benchsum.Record(b, "serve_s3a_batch_backend_reads", perBatch(reads.Load()), "req/batch", "-")
}

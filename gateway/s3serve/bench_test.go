package s3serve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sys/unix"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/internal/emulator"
)

// p50 is the median latency of n runs of f.
func p50(b *testing.B, n int, f func(i int) error) time.Duration {
	b.Helper()
	d := make([]time.Duration, n)
	for i := range n {
		d[i] = timed(b, func() error { return f(i) })
	}
	return median(d)
}

// putGet measures the p50 of n 4 KiB PUTs and then n GETs through c into
// bucket, one after the other.
func putGet(b *testing.B, c *s3.Client, bucket string, n int) (put, get time.Duration) {
	body := bytes.Repeat([]byte("x"), 4096)
	put = p50(b, n, func(i int) error { return put4k(c, bucket, fmt.Sprintf("bench/%d", i), body)() })
	get = p50(b, n, func(i int) error { return get4k(c, bucket, fmt.Sprintf("bench/%d", i))() })
	return put, get
}

// median is the middle of d (sorted in place).
func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// timed runs f and returns how long it took.
func timed(b *testing.B, f func() error) time.Duration {
	b.Helper()
	start := time.Now()
	if err := f(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

func put4k(c *s3.Client, bucket, key string, body []byte) func() error {
	return func() error {
		_, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
		return err
	}
}

func get4k(c *s3.Client, bucket, key string) func() error {
	return func() error {
		o, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, o.Body)
		o.Body.Close()
		return err
	}
}

// syncCost returns how much longer a durable publish of body in dir (temp
// file, fdatasync, rename, directory fsync: what the local store does)
// takes than the same steps without the two syncs, which versitygw's
// posix backend never does.
func syncCost(b *testing.B, dir string, i int, body []byte) time.Duration {
	b.Helper()
	publish := func(name string, sync bool) time.Duration {
		return timed(b, func() error {
			tmp := filepath.Join(dir, "."+name+".tmp")
			f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			if _, err := f.Write(body); err != nil {
				f.Close()
				return err
			}
			if sync {
				if err := unix.Fdatasync(int(f.Fd())); err != nil {
					f.Close()
					return err
				}
			}
			if err := f.Close(); err != nil {
				return err
			}
			if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
				return err
			}
			if !sync {
				return nil
			}
			d, err := os.Open(dir)
			if err != nil {
				return err
			}
			defer d.Close()
			return d.Sync()
		})
	}
	return publish(fmt.Sprintf("s%d", i), true) - publish(fmt.Sprintf("n%d", i), false)
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
// guard), and beside the local store's own PutStream and GetStream on the
// same disk (the same durability as the front door, without HTTP, SigV4
// and the guard), and what the two syncs of a durable publish cost on that
// disk. They take turns in blocks of requests, so a slow spell of the
// shared disk falls on all of them alike; within its block the front door
// and the local store take turns request by request, and the front door's
// own cost is the median of its time less the local store's beside it.
// Both S3 servers get the same client (signed payloads, path style).
func BenchmarkServeLatency(b *testing.B) {
	ctx := context.Background()
	direct, front := directAndFront(b)
	local, err := filestore.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	floor := b.TempDir()
	body := bytes.Repeat([]byte("x"), 4096)
	n := max(300, b.N)
	const block = 25
	var vPut, cPut, fPut, dPut, syncs, vGet, cGet, fGet, dGet []time.Duration
	// Each server runs a block of requests in turn: a block of versitygw's
	// requests (which never sync) right after the local store's syncs
	// would wait on the journal commits those started.
	blocks := func(series ...func(i int)) {
		for start := 0; start < n; start += block {
			for _, f := range series {
				for i := start; i < min(start+block, n); i++ {
					f(i)
				}
			}
		}
	}
	key := func(i int) string { return fmt.Sprintf("bench/%d", i) }
	b.ResetTimer()
	blocks(
		func(i int) { vPut = append(vPut, timed(b, put4k(direct, "ckpt", key(i), body))) },
		func(i int) {
			// the two that sync take turns request by request
			c := timed(b, put4k(front, "ckpt", key(i), body))
			f := timed(b, func() error {
				_, err := local.PutStream(ctx, "ckpt/"+key(i), bytes.NewReader(body), gateway.None())
				return err
			})
			cPut, fPut, dPut = append(cPut, c), append(fPut, f), append(dPut, c-f)
		},
		func(i int) { syncs = append(syncs, syncCost(b, floor, i, body)) },
	)
	blocks(
		func(i int) { vGet = append(vGet, timed(b, get4k(direct, "ckpt", key(i)))) },
		func(i int) {
			c := timed(b, get4k(front, "ckpt", key(i)))
			f := timed(b, func() error {
				rc, _, err := local.GetStream(ctx, "ckpt/"+key(i))
				if err != nil {
					return err
				}
				_, err = io.Copy(io.Discard, rc)
				rc.Close()
				return err
			})
			cGet, fGet, dGet = append(cGet, c), append(fGet, f), append(dGet, c-f)
		},
	)
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	ratio := func(a, b time.Duration) float64 { return float64(a) / float64(b) }
	vp, cp, fp, sp := median(vPut), median(cPut), median(fPut), median(syncs)
	vg4, cg, fg := median(vGet), median(cGet), median(fGet)
	benchsum.Record(b, "serve_put_4k_p50_vs_versitygw_posix", ratio(cp, vp), "ratio", "<=1.3")
	benchsum.Record(b, "serve_get_4k_p50_vs_versitygw_posix", ratio(cg, vg4), "ratio", "<=1.3")
	benchsum.Record(b, "serve_put_4k_p50_vs_filestore_direct", ratio(cp, fp), "ratio", "-")
	benchsum.Record(b, "serve_get_4k_p50_vs_filestore_direct", ratio(cg, fg), "ratio", "-")
	benchsum.Record(b, "serve_put_4k_frontdoor_ms", ms(median(dPut)), "ms", "-")
	benchsum.Record(b, "serve_get_4k_frontdoor_ms", ms(median(dGet)), "ms", "-")
	benchsum.Record(b, "serve_put_4k_sync_ms", ms(sp), "ms", "-")
	benchsum.Record(b, "serve_put_4k_p50_less_sync_vs_versitygw_posix", ratio(cp-sp, vp), "ratio", "-")
	benchsum.Record(b, "serve_put_4k_p50_ms", ms(cp), "ms", "-")
	benchsum.Record(b, "serve_get_4k_p50_ms", ms(cg), "ms", "-")
	benchsum.Record(b, "versitygw_posix_put_4k_p50_ms", ms(vp), "ms", "-")
	benchsum.Record(b, "filestore_put_4k_p50_ms", ms(fp), "ms", "-")
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

// BenchmarkServeListPageCost counts the backend listing requests of one
// 1,000-key ListObjectsV2 page from the middle of a 10,000-key prefix over
// the local disk: one store page (gateway.ListPage), and no listing read
// from the prefix's start.
func BenchmarkServeListPageCost(b *testing.B) {
	var cs *countingStore
	ep, dir := serveWrapped(b, func(s gateway.Store) gateway.Store { cs = newCounting(s); return cs })
	const n = 10000
	if err := os.MkdirAll(filepath.Join(dir, "ckpt", "many"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, "ckpt", "many", fmt.Sprintf("%05d", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	runs := max(10, b.N)
	cs.reset()
	b.ResetTimer()
	start := time.Now()
	for range runs {
		l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("ckpt"), Prefix: aws.String("many/"), StartAfter: aws.String("many/04999"), MaxKeys: aws.Int32(1000)})
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Contents) != 1000 || aws.ToString(l.Contents[0].Key) != "many/05000" {
			b.Fatalf("page of %d keys from %q", len(l.Contents), aws.ToString(l.Contents[0].Key))
		}
	}
	took := time.Since(start) / time.Duration(runs)
	b.StopTimer()
	// A bucket check lists one entry; anything beyond is a rescan.
	benchsum.Record(b, "store_list_page_cost", float64(cs.pages)/float64(runs), "req/page", "<=1")
	benchsum.Record(b, "store_list_page_rescanned_keys", float64(cs.listed-cs.lists)/float64(runs), "keys/page", "<=0")
	benchsum.Record(b, "serve_list_page_1000_of_10000", float64(took.Microseconds()), "µs", "-")
}

package s3serve_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/s3serve"
)

// storeCalls records the store requests the front door makes while on.
type storeCalls struct {
	mu    sync.Mutex
	on    bool
	calls []string
}

func (r *storeCalls) wrap(s gateway.Store) gateway.Store {
	return gateway.Intercept(s, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
		r.mu.Lock()
		if r.on {
			r.calls = append(r.calls, fmt.Sprintf("%s %s", c.Op, c.Key))
		}
		r.mu.Unlock()
		return next(ctx)
	})
}

// during returns the store requests f made.
func (r *storeCalls) during(t *testing.T, f func() error) []string {
	t.Helper()
	r.mu.Lock()
	r.on, r.calls = true, nil
	r.mu.Unlock()
	err := f()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	if err != nil {
		t.Fatal(err)
	}
	return r.calls
}

// TestServeStoreRequestsPerObjectCall: a PUT, GET or HEAD of an object
// outside any checkpoint asks the store about its bucket once (the
// bucket's marker, one Stat), not once for versitygw's ACL check and once
// more for the operation, and not with a listing; a GET or HEAD of an
// existing object does not ask at all (the read tells a missing bucket
// from a missing key: TestServeObjectReadIsOneStoreRequest).
func TestServeStoreRequestsPerObjectCall(t *testing.T) {
	var rec storeCalls
	ep := serveStore(t, bucketDir(t), rec.wrap, noBucketCache)
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("data")}); err != nil {
		t.Fatal(err)
	}
	look := "stat data/_ckgate/bucket"
	for _, tc := range []struct {
		name string
		do   func() error
		want []string
	}{
		{"put", func() error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("a/b"), Body: strings.NewReader("x")})
			return err
		}, []string{look, "put data/a/b"}},
		{"get", func() error {
			o, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("a/b")})
			if err == nil {
				_, err = io.Copy(io.Discard, o.Body)
				o.Body.Close()
			}
			return err
		}, []string{"get data/a/b"}},
		{"head", func() error {
			_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("data"), Key: aws.String("a/b")})
			return err
		}, []string{"stat data/a/b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rec.during(t, tc.do); !slices.Equal(got, tc.want) {
				t.Fatalf("store requests %q, want %q", got, tc.want)
			}
		})
	}
	// A bucket that is a directory made outside the front door has no
	// marker: it is found by the first key of a listing, once per request,
	// and once it is known to have no marker, by the listing alone.
	putK := func() error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("k"), Body: strings.NewReader("x")})
		return err
	}
	if got, want := rec.during(t, putK), []string{"stat ckpt/_ckgate/bucket", "list ckpt/", "put ckpt/k"}; !slices.Equal(got, want) {
		t.Fatalf("first request: store requests %q, want %q", got, want)
	}
	if got, want := rec.during(t, putK), []string{"list ckpt/", "put ckpt/k"}; !slices.Equal(got, want) {
		t.Fatalf("later request: store requests %q, want %q", got, want)
	}
}

// TestServeBucketLookupFollowsTheStore: without the bucket cache
// (TestServeBucketCache), what the front door learnt about a bucket never
// outlives the bucket: one emptied and removed outside it is
// gone (NoSuchBucket), and one made again by CreateBucket is there.
func TestServeBucketLookupFollowsTheStore(t *testing.T) {
	dir := bucketDir(t)
	ep := serveStore(t, dir, nil, noBucketCache)
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	head := func() error {
		_, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("ckpt")})
		return err
	}
	if err := head(); err != nil {
		t.Fatalf("bucket made outside the front door: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "ckpt")); err != nil {
		t.Fatal(err)
	}
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("k"), Body: strings.NewReader("x")})
	if code(err) != "NoSuchBucket" {
		t.Fatalf("put into a removed bucket: %v, want NoSuchBucket", err)
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("ckpt")}); err != nil {
		t.Fatal(err)
	}
	if err := head(); err != nil {
		t.Fatalf("bucket made again: %v", err)
	}
}

// TestServeListBucketsReadsOnePage: ListBuckets is one listing page of the
// store's first-level prefixes, whatever the buckets hold, not a walk of
// every key in the store.
func TestServeListBucketsReadsOnePage(t *testing.T) {
	var pc *countingStore
	ep, _ := serveWrapped(t, func(s gateway.Store) gateway.Store { pc = newCounting(s); return pc })
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	for i := range 40 {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(fmt.Sprintf("data/k%02d", i)), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("other")}); err != nil {
		t.Fatal(err)
	}
	pc.mu.Lock()
	pc.listed, pc.pages = 0, 0
	pc.mu.Unlock()
	lb, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(lb.Buckets) != 2 || aws.ToString(lb.Buckets[0].Name) != "ckpt" || aws.ToString(lb.Buckets[1].Name) != "other" {
		t.Fatalf("list buckets: %+v, %v; want ckpt and other", lb, err)
	}
	if pc.listed != 0 || pc.pages != 1 {
		t.Fatalf("ListBuckets read %d keys by List and %d pages; want 0 and 1", pc.listed, pc.pages)
	}
}

// noBucketCache has the server ask the store about a bucket on every
// request (Config.BucketTTL negative).
func noBucketCache(c *s3serve.Config) { c.BucketTTL = -1 }

// TestServeBucketCache: a bucket seen to exist is not asked about again
// within BucketTTL (a write is one store request), and a DeleteBucket
// through this server is seen at once: the next write is NoSuchBucket.
func TestServeBucketCache(t *testing.T) {
	var rec storeCalls
	ep := serveStore(t, bucketDir(t), rec.wrap, func(c *s3serve.Config) { c.BucketTTL = time.Hour })
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("data")}); err != nil {
		t.Fatal(err)
	}
	put := func(key string) func() error {
		return func() error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String(key), Body: strings.NewReader("x")})
			return err
		}
	}
	rec.during(t, put("a")) // may look the bucket up once
	if got, want := rec.during(t, put("b")), []string{"put data/b"}; !slices.Equal(got, want) {
		t.Fatalf("a write to a bucket seen a moment ago: store requests %q, want %q", got, want)
	}
	for _, k := range []string{"a", "b"} {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("data"), Key: aws.String(k)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("data")}); err != nil {
		t.Fatal(err)
	}
	if err := put("c")(); code(err) != "NoSuchBucket" {
		t.Fatalf("a write after DeleteBucket: %v, want NoSuchBucket", err)
	}
}

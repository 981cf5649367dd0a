package s3serve_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
)

// TestServeObjectReadIsOneStoreRequest: a GET or HEAD of an existing
// object costs the store one request (no bucket probe before it, which on
// an object store is a request of its own); a read in a missing bucket is
// still NoSuchBucket and a missing key in an existing one NoSuchKey. A PUT
// into a bucket made by CreateBucket probes the bucket with one request
// (its marker), not a listing.
func TestServeObjectReadIsOneStoreRequest(t *testing.T) {
	var mu sync.Mutex // the server's goroutines record, the test reads
	var ops []string
	count := func(s gateway.Store) gateway.Store {
		return gateway.Intercept(s, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
			mu.Lock()
			ops = append(ops, string(c.Op)+" "+c.Key)
			mu.Unlock()
			return next(ctx)
		})
	}
	reset := func() { mu.Lock(); ops = nil; mu.Unlock() }
	seen := func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(ops) }
	ep, _ := serveWrapped(t, count)
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("made")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("made"), Key: aws.String("data/a"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	measure := func(what string, f func() error) {
		t.Helper()
		reset()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := seen(); len(got) != 1 {
			t.Fatalf("%s: %d store requests %v, want 1", what, len(got), got)
		}
	}
	measure("GET", func() error {
		o, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("made"), Key: aws.String("data/a")})
		if err == nil {
			o.Body.Close()
		}
		return err
	})
	measure("HEAD", func() error {
		_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("made"), Key: aws.String("data/a")})
		return err
	})
	reset()
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("made"), Key: aws.String("data/b"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	for _, op := range seen() {
		if strings.HasPrefix(op, string(gateway.OpList)) {
			t.Fatalf("PUT into a bucket with a marker listed the store: %v", seen())
		}
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("never"), Key: aws.String("data/a")}); code(err) != "NoSuchBucket" {
		t.Fatalf("GET in a missing bucket: %v, want NoSuchBucket", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("never"), Key: aws.String("data/a")}); status(err) != http.StatusNotFound {
		t.Fatalf("HEAD in a missing bucket: %v, want 404", err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("made"), Key: aws.String("data/none")}); code(err) != "NoSuchKey" {
		t.Fatalf("GET of a missing key: %v, want NoSuchKey", err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("made"), Key: aws.String("_ckgate/bucket")}); code(err) != "NoSuchKey" {
		t.Fatalf("GET of the bucket marker: %v, want NoSuchKey", err)
	}
}

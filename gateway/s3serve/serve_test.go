package s3serve_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/s3serve"
	"github.com/ckgate/ckgate/gateway/s3serve/s3atrace"
	"github.com/ckgate/ckgate/policy"
)

const testCreds = `principals:
  - access_key: ORDERSJOB
    secret_key: orders-secret-0123456789
    principal: orders-job
    kind: job
  - access_key: BILLINGJOB
    secret_key: billing-secret-0123456789
    principal: billing-job
    kind: job
  - access_key: CLEANER
    secret_key: cleaner-secret-0123456789
    principal: nightly-cleanup
    kind: housekeeping
`

// serve starts s3serve over a fresh local store (with bucket "ckpt") under
// the default policies and returns its endpoint.
func serve(t testing.TB) (endpoint, dir string) {
	t.Helper()
	return serveWrapped(t, nil)
}

// serveWrapped is serve with the raw store wrapped by wrap (when not nil).
func serveWrapped(t testing.TB, wrap func(gateway.Store) gateway.Store) (endpoint, dir string) {
	t.Helper()
	dir = bucketDir(t)
	return serveStore(t, dir, wrap, nil), dir
}

// bucketDir is a new local store holding bucket "ckpt".
func bucketDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ckpt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ckpt", "README"), []byte("bucket"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serveDir starts another server over the local store at dir (a restart,
// or a replica beside the first).
func serveDir(t testing.TB, dir string) (endpoint string) {
	t.Helper()
	return serveStore(t, dir, nil, nil)
}

// serveStore starts s3serve over the local store at dir, wrapped by wrap
// (when not nil), with the configuration tune changes (when not nil), and
// returns its endpoint (https:// when tune sets a certificate).
func serveStore(t testing.TB, dir string, wrap func(gateway.Store) gateway.Store, tune func(*s3serve.Config)) (endpoint string) {
	t.Helper()
	_, endpoint = startServer(t, dir, wrap, tune)
	return endpoint
}

// startServer is serveStore that also returns the server.
func startServer(t testing.TB, dir string, wrap func(gateway.Store) gateway.Store, tune func(*s3serve.Config)) (*s3serve.Server, string) {
	t.Helper()
	fs, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	var st gateway.Store = fs
	if wrap != nil {
		st = wrap(fs)
	}
	creds, err := s3serve.ParseCredentials([]byte(testCreds))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.New(context.Background(), policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ready := make(chan struct{})
	cfg := s3serve.Config{
		Store:       st,
		Credentials: creds,
		Guard: func(p s3serve.Principal) (gateway.Store, error) {
			g, _, err := policy.Guard(st, policy.GuardConfig{Engine: eng, Principal: policy.Principal{ID: p.ID, Kind: p.Kind},
				StoreURL: dir, WriterSession: p.Kind == policy.KindJob, RootOwners: true})
			return g, err
		},
		Ready: func() { close(ready) },
	}
	if tune != nil {
		tune(&cfg)
	}
	srv, err := s3serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(addr) }()
	select {
	case <-ready:
	case err := <-served:
		t.Fatalf("serve %s: %v", addr, err)
	}
	t.Cleanup(func() { srv.Shutdown(); <-served })
	if cfg.TLSCert != "" {
		return srv, "https://" + addr
	}
	return srv, "http://" + addr
}

func client(endpoint, key, secret string) *s3.Client {
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(key, secret, ""),
		Retryer:      aws.NopRetryer{},
	})
}

func code(err error) string { return s3atrace.Code(err) }

func status(err error) int { return s3atrace.StatusCode(err) }

// s3aCommit is Spark's default file manager committing the log entry key
// (s3atrace's sequence: existence probes, a temp PUT named with id, the
// rename's probes, a COPY carrying the temp's ETag, a DELETE of the temp).
func s3aCommit(ctx context.Context, c *s3.Client, key, body, id string) error {
	d := &s3atrace.Driver{Client: c, Bucket: "ckpt", Temp: func() string { return id }}
	return s3atrace.Run(ctx, d.Create(key, []byte(body)))
}

func TestServeObjectOperations(t *testing.T) {
	ep, _ := serve(t)
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	b := aws.String("ckpt")
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: b}); err != nil {
		t.Fatalf("head bucket: %v", err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("nope")}); status(err) != 404 {
		t.Fatalf("head missing bucket: %v, want 404", err)
	}
	p, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("data/a.txt"), Body: strings.NewReader("hello world"), IfNoneMatch: aws.String("*")})
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("data/a.txt"), Body: strings.NewReader("again"), IfNoneMatch: aws.String("*")}); status(err) != 412 {
		t.Fatalf("second If-None-Match put: %v, want 412", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("data/a.txt"), Body: strings.NewReader("cas"), IfMatch: aws.String(`"stale"`)}); status(err) != 412 {
		t.Fatalf("stale If-Match put: %v, want 412", err)
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("data/a.txt"), Range: aws.String("bytes=6-10")})
	if err != nil {
		t.Fatalf("ranged get: %v", err)
	}
	got, _ := io.ReadAll(g.Body)
	g.Body.Close()
	if string(got) != "world" {
		t.Fatalf("range 6-10 = %q, want world", got)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("data/a.txt")})
	if err != nil || aws.ToInt64(h.ContentLength) != 11 || aws.ToString(h.ETag) != aws.ToString(p.ETag) {
		t.Fatalf("head: %+v, %v", h, err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("data/none")}); status(err) != 404 {
		t.Fatalf("head missing: %v, want 404", err)
	}
	for i := range 3 {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(fmt.Sprintf("data/d%d/x", i)), Body: bytes.NewReader(nil)}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String("data/"), Delimiter: aws.String("/"), MaxKeys: aws.Int32(2)})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(l.Contents)+len(l.CommonPrefixes) != 2 || !aws.ToBool(l.IsTruncated) {
		t.Fatalf("page 1: %d objects %d prefixes truncated=%v", len(l.Contents), len(l.CommonPrefixes), aws.ToBool(l.IsTruncated))
	}
	l2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String("data/"), Delimiter: aws.String("/"), ContinuationToken: l.NextContinuationToken})
	if err != nil {
		t.Fatalf("list page 2: %v", err)
	}
	var names []string
	for _, p := range append(l.CommonPrefixes, l2.CommonPrefixes...) {
		names = append(names, aws.ToString(p.Prefix))
	}
	for _, o := range append(l.Contents, l2.Contents...) {
		names = append(names, aws.ToString(o.Key))
	}
	if fmt.Sprint(names) != "[data/d0/ data/d1/ data/d2/ data/a.txt]" {
		t.Fatalf("listing = %v", names)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("data/never-was")}); err != nil {
		t.Fatalf("delete of a missing key: %v, want 204", err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("data/a.txt"), IfMatch: aws.String(`"stale"`)}); status(err) != 412 {
		t.Fatalf("delete with a stale If-Match: %v, want 412", err)
	}
	d, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("data/a.txt")}, {Key: aws.String("data/d0/x")}}}})
	if err != nil || len(d.Deleted) != 2 {
		t.Fatalf("delete objects: %+v, %v", d, err)
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("fresh")}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("fresh")}); err != nil {
		t.Fatalf("head of the new bucket: %v", err)
	}
	if l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("fresh")}); err != nil || len(l.Contents) != 0 {
		t.Fatalf("a new bucket lists %+v, %v; want nothing", l, err)
	}
	lb, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(lb.Buckets) != 2 || aws.ToString(lb.Buckets[1].Name) != "fresh" {
		t.Fatalf("list buckets: %+v, %v", lb, err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: b}); code(err) != "BucketNotEmpty" {
		t.Fatalf("delete of a bucket holding objects: %v, want BucketNotEmpty", err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("fresh")}); err != nil {
		t.Fatalf("delete of the empty bucket: %v", err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("fresh")}); status(err) != 404 {
		t.Fatalf("head of the deleted bucket: %v, want 404", err)
	}
	if _, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: b, Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}}); status(err) != 501 {
		t.Fatalf("put bucket tagging: %v, want 501 NotImplemented", err)
	}
}

func TestServeRefusesBadSignaturesAndHousekeeping(t *testing.T) {
	ep, _ := serve(t)
	ctx := context.Background()
	bad := client(ep, "ORDERSJOB", "wrong-secret")
	if _, err := bad.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("README")}); status(err) != 403 {
		t.Fatalf("wrong secret: %v, want 403", err)
	}
	if _, err := bad.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("ckpt")}); code(err) != "SignatureDoesNotMatch" {
		t.Fatalf("wrong secret: %v, want SignatureDoesNotMatch", err)
	}
	unknown := client(ep, "NOBODY", "whatever")
	if _, err := unknown.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("ckpt")}); code(err) != "InvalidAccessKeyId" {
		t.Fatalf("unknown key: %v, want InvalidAccessKeyId", err)
	}
	job := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	if err := s3aCommit(ctx, job, "q2/metadata", `{"id":"q2"}`, "m"); err != nil {
		t.Fatal(err)
	}
	if err := s3aCommit(ctx, job, "q2/offsets/0", "v1\n{}\n", "o"); err != nil {
		t.Fatal(err)
	}
	hk := client(ep, "CLEANER", "cleaner-secret-0123456789")
	_, err := hk.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("q2/offsets/0")})
	if status(err) != 403 || code(err) != "AccessDenied" {
		t.Fatalf("housekeeping delete of a log entry: %v, want 403 AccessDenied", err)
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && !strings.Contains(ae.ErrorMessage(), "CKG-") {
		t.Errorf("denial does not name the rule: %q", ae.ErrorMessage())
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/s3serve/s3atrace"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/policy"
)

// `ckgate serve` over each emulator backend: the store at --store is an
// S3 bucket (versitygw), a GCS bucket (fake-gcs-server) or an Azure
// container (Azurite), each holding the served buckets as first-level
// prefixes of the store URL.

// serveBackend is one emulator a store URL of ckgate serve points at.
type serveBackend struct {
	name string
	// store starts the emulator (once per test), makes a new bucket or
	// container on it with `ckgate store mb` and returns the URL of the
	// store under it that serve is to run over (prefix is appended to the
	// bucket's path, "" for the bucket itself).
	store func(t *testing.T, prefix string) func(prefix string) string
}

var serveBackends = []serveBackend{
	{"s3", func(t *testing.T, _ string) func(string) string {
		emu := emulator.Versitygw(t)
		q := url.Values{"endpoint": {emu.Endpoint}, "path_style": {"true"}, "region": {emu.Region}}.Encode()
		b := bucketName()
		ckgate(t, Options{}, "", "store", "mb", "s3://"+b+"?"+q).want(t, 0, "ready")
		return func(prefix string) string { return "s3://" + joinPath(b, prefix) + "?" + q }
	}},
	{"gcs", func(t *testing.T, _ string) func(string) string {
		emu := emulator.FakeGCS(t)
		t.Setenv("STORAGE_EMULATOR_HOST", gcsDeleteConditionsProxy(t, emu.Host))
		b := bucketName()
		ckgate(t, Options{}, "", "store", "mb", "gs://"+b+"?project=ckgate-test").want(t, 0, "ready")
		return func(prefix string) string { return "gs://" + joinPath(b, prefix) }
	}},
	{"azure", func(t *testing.T, _ string) func(string) string {
		account, q := azurite(t)
		c := bucketName()
		ckgate(t, Options{}, "", "store", "mb", "az://"+account+"/"+c+"?"+q).want(t, 0, "ready")
		return func(prefix string) string { return "az://" + account + "/" + joinPath(c, prefix) + "?" + q }
	}},
}

// gcsDeleteConditionsProxy is a reverse proxy in front of fake-gcs-server
// at host that honours generation preconditions on deletes, as Cloud
// Storage does and the emulator does not (emulator.GCSDeleteConditions).
// It returns the proxy's host:port.
func gcsDeleteConditionsProxy(t *testing.T, host string) string {
	t.Helper()
	target := &url.URL{Scheme: "http", Host: host}
	// The emulator serves media downloads by the Host it was told is public.
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	rp.Transport = emulator.GCSDeleteConditions(nil)
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func joinPath(bucket, prefix string) string {
	if prefix == "" {
		return bucket
	}
	return bucket + "/" + prefix
}

// frontDoorCreds are the principals of the backend tests: two queries'
// jobs, a housekeeping job and an admin (the versitygw suite).
const frontDoorCreds = serveCreds + `  - access_key: BILLINGJOB
    secret_key: billing-s3cr3t-value-0123456789
    principal: billing-job
    kind: job
  - access_key: SUITEADMIN
    secret_key: suite-admin-secret-0123456789
    principal: suite
    kind: admin
`

func frontDoorClient(endpoint, key, secret string) *s3.Client {
	return s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""),
		Retryer:     aws.NopRetryer{},
	})
}

// TestServeBackends runs ckgate serve over each emulator backend: S3A's
// commit race, the root owner, Spark's purge and a housekeeping delete.
// The versitygw suite over each backend is TestServeBackendsVersitygwSuite.
func TestServeBackends(t *testing.T) {
	for _, be := range serveBackends {
		t.Run(be.name, func(t *testing.T) {
			storeAt := be.store(t, "")
			storeURL := storeAt("front")
			ep, _ := serveOn(t, storeURL, frontDoorCreds)
			raw := openRaw(t, storeURL)
			admin := frontDoorClient(ep, "SUITEADMIN", "suite-admin-secret-0123456789")
			if _, err := admin.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("ckpt")}); err != nil {
				t.Fatalf("CreateBucket ckpt over %s: %v", be.name, err)
			}
			t.Run("buckets", func(t *testing.T) { frontDoorBuckets(t, ep, raw) })
			t.Run("commit-race", func(t *testing.T) { frontDoorCommitRace(t, ep, raw) })
			t.Run("root-owner", func(t *testing.T) { frontDoorRootOwner(t, ep, raw) })
			t.Run("purge", func(t *testing.T) { frontDoorPurge(t, ep, raw) })
		})
	}
}

// openRaw opens the store at storeURL directly (no guard), to see what the
// front door left on it.
func openRaw(t *testing.T, storeURL string) gateway.Store {
	t.Helper()
	st, err := stores.Open(context.Background(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gateway.Close(st) })
	return st
}

func rawKeys(t *testing.T, st gateway.Store, prefix string) []string {
	t.Helper()
	var keys []string
	for a, err := range st.List(context.Background(), prefix) {
		if err != nil {
			t.Fatalf("list %s: %v", prefix, err)
		}
		keys = append(keys, a.Key)
	}
	return keys
}

func apiCode(err error) string { return s3atrace.Code(err) }

// frontDoorBuckets: CreateBucket, HeadBucket, ListBuckets and DeleteBucket
// on a store without directories (the bucket marker).
func frontDoorBuckets(t *testing.T, ep string, raw gateway.Store) {
	ctx := context.Background()
	c := frontDoorClient(ep, "SUITEADMIN", "suite-admin-secret-0123456789")
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("scratch")}); httpStatus(err) != http.StatusNotFound {
		t.Fatalf("HeadBucket of a bucket never made: %v, want 404", err)
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("scratch")}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("scratch")}); apiCode(err) != "BucketAlreadyOwnedByYou" {
		t.Fatalf("CreateBucket again: %v, want BucketAlreadyOwnedByYou", err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("scratch")}); err != nil {
		t.Fatalf("HeadBucket of the new empty bucket: %v", err)
	}
	lb, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range lb.Buckets {
		names = append(names, *b.Name)
	}
	if strings.Join(names, ",") != "ckpt,scratch" {
		t.Fatalf("ListBuckets = %v, want [ckpt scratch]", names)
	}
	lo, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("scratch")})
	if err != nil || len(lo.Contents) != 0 {
		t.Fatalf("listing of the empty bucket: %v, %d objects (the marker must not show)", err, len(lo.Contents))
	}
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("scratch"), Key: aws.String("a/b"), Body: strings.NewReader("x")})
	if err != nil {
		t.Fatal(err)
	}
	et := aws.ToString(put.ETag)
	if len(et) < 3 || et[0] != '"' || et[len(et)-1] != '"' || strings.Contains(et[1:len(et)-1], `"`) {
		t.Fatalf("PutObject ETag %q: want one quoted string", et)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("scratch"), Key: aws.String("a/b"), IfMatch: put.ETag})
	if err != nil || aws.ToString(head.ETag) != et {
		t.Fatalf("HeadObject If-Match %s: %v, ETag %q", et, err, aws.ToString(head.ETag))
	}
	// The ETag is the backend's version (S3's ETag, GCS's generation,
	// Azure's ETag), quoted once.
	if a, err := raw.Stat(ctx, "scratch/a/b"); err != nil || `"`+strings.Trim(string(a.Version), `"`)+`"` != et {
		t.Fatalf("ETag %s, the backend's version %q (%v)", et, a.Version, err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("scratch"), Key: aws.String("a/b"), IfMatch: put.ETag,
		Body: strings.NewReader("y")}); err != nil {
		t.Fatalf("PutObject If-Match the ETag PutObject returned: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("scratch"), Key: aws.String("a/b"), IfMatch: put.ETag,
		Body: strings.NewReader("z")}); httpStatus(err) != http.StatusPreconditionFailed {
		t.Fatalf("PutObject If-Match a stale ETag: %v, want 412", err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("scratch"), Key: aws.String("a/b"), IfMatch: put.ETag}); httpStatus(err) != http.StatusPreconditionFailed {
		t.Fatalf("DeleteObject If-Match a stale ETag: %v, want 412", err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("scratch")}); apiCode(err) != "BucketNotEmpty" {
		t.Fatalf("DeleteBucket of a bucket with an object: %v, want BucketNotEmpty", err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("scratch"), Key: aws.String("a/b")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("scratch")}); err != nil {
		t.Fatalf("DeleteBucket: %v", err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("scratch")}); httpStatus(err) != http.StatusNotFound {
		t.Fatalf("HeadBucket after DeleteBucket: %v, want 404", err)
	}
	if keys := rawKeys(t, raw, "scratch/"); len(keys) != 0 {
		t.Fatalf("the deleted bucket left %v on the store", keys)
	}
}

// s3aPutCopy is Spark's default file manager committing bucket ckpt's key:
// a temp PUT in the same directory, a COPY to the final name carrying the
// temp's ETag, a DELETE of the temp.
func s3aPutCopy(ctx context.Context, c *s3.Client, key, body, id string) error {
	dir, name := filepath.Split(key)
	tmp := dir + "." + name + "." + id + ".tmp"
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(tmp), Body: strings.NewReader(body)})
	if err != nil {
		return fmt.Errorf("put temp %s: %w", tmp, err)
	}
	_, cerr := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(key),
		CopySource: aws.String("ckpt/" + tmp), CopySourceIfMatch: put.ETag})
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(tmp)}); err != nil {
		return fmt.Errorf("delete temp %s: %w", tmp, err)
	}
	return cerr
}

// frontDoorCommitRace: 16 drivers commit one offsets/0 the S3A way; one
// wins, every other gets 412 PreconditionFailed, no temp is left and the
// store holds the winner's bytes.
func frontDoorCommitRace(t *testing.T, ep string, raw gateway.Store) {
	ctx := context.Background()
	c := frontDoorClient(ep, "ORDERSJOB", "orders-s3cr3t-value-0123456789")
	if err := s3aPutCopy(ctx, c, "race/metadata", `{"id":"race"}`, "m"); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s3aPutCopy(ctx, c, "race/offsets/0", fmt.Sprintf("v1\n{}\n{\"writer\":%d}\n", i), fmt.Sprint(i))
		}()
	}
	wg.Wait()
	won, err := s3atrace.Winner(errs)
	if err != nil {
		t.Fatalf("offsets/0: %v", err)
	}
	data, _, err := raw.Get(ctx, "ckpt/race/offsets/0")
	if err != nil || string(data) != fmt.Sprintf("v1\n{}\n{\"writer\":%d}\n", won) {
		t.Fatalf("offsets/0 on the store = %q (%v), want the winner %d's", data, err, won)
	}
	keys := rawKeys(t, raw, "ckpt/race/offsets/")
	if len(keys) != 1 {
		t.Fatalf("offsets/ on the store holds %v, want offsets/0 alone (no temps)", keys)
	}
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("race/offsets/0")})
	if err != nil {
		t.Fatal(err)
	}
	got.Body.Close()
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("race/offsets/0"), IfMatch: got.ETag}); err != nil {
		t.Fatalf("HeadObject If-Match the GET's ETag %s: %v", aws.ToString(got.ETag), err)
	}
}

// frontDoorRootOwner: the first job to write a root's metadata owns it (a
// record on the store); a second query's writes and deletes under it are
// 403 naming CKG-P014.
func frontDoorRootOwner(t *testing.T, ep string, raw gateway.Store) {
	ctx := context.Background()
	orders := frontDoorClient(ep, "ORDERSJOB", "orders-s3cr3t-value-0123456789")
	billing := frontDoorClient(ep, "BILLINGJOB", "billing-s3cr3t-value-0123456789")
	if err := s3aPutCopy(ctx, orders, "owned/metadata", `{"id":"owned"}`, "m"); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	if err := s3aPutCopy(ctx, orders, "owned/offsets/0", "v1\n{}\n0", "o"); err != nil {
		t.Fatalf("offsets/0: %v", err)
	}
	rec, _, err := raw.Get(ctx, "ckpt/owned/"+policy.RootOwnerKey)
	if err != nil || !strings.Contains(string(rec), "orders-job") {
		t.Fatalf("root owner record on the store: %q (%v), want orders-job", rec, err)
	}
	refused := func(what string, err error) {
		t.Helper()
		if httpStatus(err) != http.StatusForbidden || !strings.Contains(err.Error(), "CKG-P014") {
			t.Fatalf("%s: %v (HTTP %d), want 403 naming CKG-P014", what, err, httpStatus(err))
		}
	}
	refused("second query commits offsets/1", s3aPutCopy(ctx, billing, "owned/offsets/1", "v1\n{}\n1", "b"))
	_, err = billing.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("owned/state/0/0/1.delta"), Body: strings.NewReader("x")})
	refused("second query writes state", err)
	_, err = billing.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("owned/offsets/0")})
	refused("second query deletes offsets/0", err)
	if _, _, err := raw.Get(ctx, "ckpt/owned/offsets/0"); err != nil {
		t.Fatalf("offsets/0 after the refusals: %v", err)
	}
	if err := s3aPutCopy(ctx, orders, "owned/offsets/1", "v1\n{}\n1", "o"); err != nil {
		t.Fatalf("the owner goes on: %v", err)
	}
}

// frontDoorPurge: the owner's purge of old batches (Spark's
// minBatchesToRetain) is allowed; a delete of what a restart needs is
// refused (CKG-P002), and any housekeeping delete under the root too
// (CKG-P004).
func frontDoorPurge(t *testing.T, ep string, raw gateway.Store) {
	ctx := context.Background()
	job := frontDoorClient(ep, "ORDERSJOB", "orders-s3cr3t-value-0123456789")
	if err := s3aPutCopy(ctx, job, "p/metadata", `{"id":"p"}`, "m"); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	const batches = 5
	for n := range batches {
		for _, log := range []string{"offsets", "commits"} {
			if err := s3aPutCopy(ctx, job, fmt.Sprintf("p/%s/%d", log, n), "v1\n{}\n0", "x"); err != nil {
				t.Fatalf("batch %d %s: %v", n, log, err)
			}
		}
	}
	del := func(c *s3.Client, key string) error {
		_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(key)})
		return err
	}
	// minBatchesToRetain 2 after batch 4: Spark purges below batch 2.
	for _, k := range []string{"p/offsets/0", "p/commits/0", "p/offsets/1", "p/commits/1"} {
		if err := del(job, k); err != nil {
			t.Fatalf("the owner's purge of %s: %v", k, err)
		}
	}
	for _, k := range []string{"p/offsets/4", "p/offsets/3", "p/commits/4", "p/metadata"} {
		if err := del(job, k); httpStatus(err) != http.StatusForbidden || !strings.Contains(err.Error(), "CKG-P002") {
			t.Fatalf("job deletes %s: %v (HTTP %d), want 403 naming CKG-P002", k, err, httpStatus(err))
		}
	}
	hk := frontDoorClient(ep, "CLEANER", "cleaner-s3cr3t-value-0123456789")
	for _, k := range []string{"p/offsets/2", "p/commits/2"} {
		if err := del(hk, k); httpStatus(err) != http.StatusForbidden || !strings.Contains(err.Error(), "CKG-P004") {
			t.Fatalf("housekeeping deletes %s: %v (HTTP %d), want 403 naming CKG-P004", k, err, httpStatus(err))
		}
	}
	want := "ckpt/p/commits/2,ckpt/p/commits/3,ckpt/p/commits/4,ckpt/p/offsets/2,ckpt/p/offsets/3,ckpt/p/offsets/4"
	var got []string
	for _, k := range rawKeys(t, raw, "ckpt/p/") {
		if strings.HasPrefix(k, "ckpt/p/offsets/") || strings.HasPrefix(k, "ckpt/p/commits/") {
			got = append(got, k)
		}
	}
	if strings.Join(got, ",") != want {
		t.Fatalf("log entries left on the store: %v, want %s", got, want)
	}
}

// TestServeBackendsVersitygwSuite runs versitygw's own integration tests
// (testdata/serve-versitygw-tests.txt, less the backend's exclusion file
// testdata/serve-versitygw-exclude-<backend>.txt) against ckgate serve over
// each emulator backend. Two workers run at once, each with its own
// server over its own prefix of the store (the suite names its buckets
// test-bucket-1, -2, ... in every process), emptied before every test.
func TestServeBackendsVersitygwSuite(t *testing.T) {
	bin, err := emulator.Find("versitygw", "bin/versitygw")
	emulator.Require(t, err)
	names := suiteList(t)
	for _, be := range serveBackends {
		t.Run(be.name, func(t *testing.T) {
			excluded := suiteExclusions(t, be.name, names)
			storeAt := be.store(t, "")
			var run []string
			for _, n := range names {
				if _, ok := excluded[n]; !ok {
					run = append(run, n)
				}
			}
			start := time.Now()
			failed := runSuite(t, bin, run, []string{storeAt("w0"), storeAt("w1")})
			t.Logf("%s: %d of %d versitygw suite tests passed (%d excluded) in %s", be.name, len(run)-failed, len(run), len(excluded),
				time.Since(start).Round(time.Second))
		})
	}
}

// suiteList reads testdata/serve-versitygw-tests.txt: the versitygw tests
// ckgate serve passes over the local disk.
func suiteList(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "serve-versitygw-tests.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			names = append(names, l)
		}
	}
	if len(names) < 100 {
		t.Fatalf("only %d suite tests listed", len(names))
	}
	return names
}

// suiteExclusions reads testdata/serve-versitygw-exclude-<backend>.txt:
// "NAME  # reason" lines. Every name must be in the suite list and give a
// reason.
func suiteExclusions(t *testing.T, backend string, names []string) map[string]string {
	t.Helper()
	file := filepath.Join("testdata", "serve-versitygw-exclude-"+backend+".txt")
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, reason, _ := strings.Cut(l, "#")
		name, reason = strings.TrimSpace(name), strings.TrimSpace(reason)
		if reason == "" || !slices.Contains(names, name) {
			t.Fatalf("%s:%d: %q: want NAME  # reason, NAME one of the suite list", file, i+1, l)
		}
		out[name] = reason
	}
	return out
}

// runSuite runs `versitygw test NAME` for every name, as many at once as
// stores, each worker against its own ckgate serve over one of stores,
// emptied before every test. It reports every failure and returns their
// number.
func runSuite(t *testing.T, bin string, names, stores []string) (failed int) {
	t.Helper()
	const key, secret = "SUITEADMIN", "suite-admin-secret-0123456789"
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	next := make(chan string, len(names))
	for _, n := range names {
		next <- n
	}
	close(next)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, storeURL := range stores {
		ep, _ := serveOn(t, storeURL, frontDoorCreds)
		raw := openRaw(t, storeURL)
		work := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range next {
				msg := ""
				if err := emptyStore(storeURL, raw); err != nil {
					msg = fmt.Sprintf("empty %s before %s: %v", gateway.Redact(storeURL), name, err)
				} else {
					cmd := exec.Command(bin, "test", "-a", key, "-s", secret, "-e", ep, name)
					cmd.Env, cmd.Dir = env, work
					if out, err := cmd.CombinedOutput(); err != nil {
						msg = fmt.Sprintf("versitygw test %s: %v\n%s", name, err, out)
					}
				}
				if msg != "" {
					mu.Lock()
					failed++
					t.Error(msg)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return failed
}

// emptyStore deletes every key of st, the store at storeURL: on the
// local disk (a path) every file and directory below it.
func emptyStore(storeURL string, st gateway.Store) error {
	if !strings.Contains(storeURL, "://") {
		entries, err := os.ReadDir(storeURL)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(storeURL, e.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	ctx := context.Background()
	var keys []string
	for a, err := range st.List(ctx, "") {
		if err != nil {
			return err
		}
		keys = append(keys, a.Key)
	}
	for _, k := range keys {
		if err := st.Delete(ctx, k, gateway.None()); err != nil && !errors.Is(err, gateway.ErrNotFound) {
			return err
		}
	}
	return nil
}

package main

import (
	"context"
	"fmt"
	"net/http"
	"path"
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
	"github.com/ckgate/ckgate/internal/faultproxy"
)

// serveFaultDrivers race every log entry, as the serve tests' S3A trace
// does; serveFaultEntries is how many entries the replay commits.
const (
	serveFaultDrivers = 16
	serveFaultEntries = 6 // offsets/0..5 and commits/0..5: 12 raced entries
)

// TestServeUnderWireFaults replays Spark's S3A commit trace (16 drivers,
// each a temp PUT, a CopyObject onto the log entry carrying the temp's
// ETag, a DELETE of the temp) against `ckgate serve`, whose --store is S3
// on versitygw reached through the fault proxy faulting 10% of serve's
// store requests with every kind (serve's SDK with its default retries and
// try_timeout=1s). A driver whose commit got a 5xx commits again with a
// new temp, as S3A's retries would; one refused 412 has lost. Then, read on
// versitygw directly: exactly one driver was told it won each entry, the
// entry holds that driver's whole body (no partial object, never a second
// winner's), and no temp is left.
func TestServeUnderWireFaults(t *testing.T) {
	emu := emulator.Versitygw(t)
	p, err := faultproxy.Start(faultproxy.Options{Target: emu.Endpoint, Provider: faultproxy.S3, Seed: wireSeed(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	b := bucketName()
	query := func(endpoint string) string { return wireS3Query(emu, endpoint) }
	ckgate(t, Options{}, "", "store", "mb", "s3://"+b+"?"+query(p.URL())).want(t, 0)
	ep, _ := serveOn(t, "s3://"+b+"?"+query(p.URL()), serveCreds)
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("ORDERSJOB", "orders-s3cr3t-value-0123456789", ""),
		Retryer:     aws.NopRetryer{}, HTTPClient: &http.Client{Timeout: time.Minute}})
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("ckpt")}); err != nil {
		t.Fatalf("create bucket ckpt through serve: %v", err)
	}
	if won, err := faultCommit(ctx, c, "q1/metadata", `{"id":"9538ada3-a233-4697-8b02-cc66250189a3"}`, "m"); err != nil || !won {
		t.Fatalf("metadata: won %v, %v", won, err)
	}

	p.SetRules(&faultproxy.Rule{Name: "all", Prob: 0.10, Faults: faultproxy.Kinds, Delay: 5 * time.Second})
	type entry struct {
		key    string
		winner int
		bodies []string
	}
	var entries []*entry
	retried := 0
	for n := range serveFaultEntries {
		for _, dir := range []string{"offsets", "commits"} {
			e := &entry{key: fmt.Sprintf("q1/%s/%d", dir, n), winner: -1, bodies: make([]string, serveFaultDrivers)}
			entries = append(entries, e)
			won := make([]bool, serveFaultDrivers)
			errs := make([]error, serveFaultDrivers)
			tries := make([]int, serveFaultDrivers)
			var wg sync.WaitGroup
			for i := range serveFaultDrivers {
				e.bodies[i] = fmt.Sprintf("v1\n{\"batchWatermarkMs\":0}\n{\"driver\":%d,\"entry\":%q}\n", i, e.key)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for tries[i] = 1; tries[i] <= 20; tries[i]++ {
						won[i], errs[i] = faultCommit(ctx, c, e.key, e.bodies[i], fmt.Sprintf("%d-%d", i, tries[i]))
						if errs[i] == nil || httpStatus(errs[i]) < 500 && httpStatus(errs[i]) != 0 {
							return
						}
					}
				}()
			}
			wg.Wait()
			for i := range serveFaultDrivers {
				retried += tries[i] - 1
				switch {
				case errs[i] != nil:
					t.Fatalf("%s: driver %d: %v (HTTP %d) after %d commits", e.key, i, errs[i], httpStatus(errs[i]), tries[i])
				case won[i] && e.winner >= 0:
					t.Fatalf("%s: drivers %d and %d were both told they committed", e.key, e.winner, i)
				case won[i]:
					e.winner = i
				}
			}
		}
	}
	p.SetRules()
	ev := p.Events()
	t.Logf("%d store requests behind serve, %d faults %v, %d commits retried after a 5xx", p.Requests(), len(ev), p.Counts(), retried)
	if len(ev) == 0 {
		t.Fatal("no fault was injected")
	}

	// Read the backend directly, not through the proxy or serve.
	st, err := stores.Open(ctx, "s3://"+b+"/ckpt?"+query(emu.Endpoint))
	if err != nil {
		t.Fatal(err)
	}
	defer gateway.Close(st)
	for _, e := range entries {
		data, _, err := st.Get(ctx, e.key)
		switch {
		case err != nil:
			t.Errorf("%s: %v", e.key, err)
		case e.winner < 0:
			t.Errorf("%s: no driver was told it committed; it holds %q", e.key, data)
		case string(data) != e.bodies[e.winner]:
			t.Errorf("%s holds %q, want the winner's (driver %d) whole body %q", e.key, data, e.winner, e.bodies[e.winner])
		}
	}
	for a, err := range st.List(ctx, "q1/") {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(a.Key, ".tmp") {
			t.Errorf("temp %s is left", a.Key)
		}
	}
}

// faultCommit is s3aCommit's trace on bucket ckpt: PUT the temp, COPY it
// onto key if it still has the temp's ETag, DELETE the temp (again until
// it goes: a 5xx leaves it otherwise; also after a failed PUT, which the
// backend may have applied). won says the COPY succeeded; a 412
// (another driver won) is no error.
func faultCommit(ctx context.Context, c *s3.Client, key, body, id string) (won bool, err error) {
	dir, name := path.Split(key)
	tmp := dir + "." + name + "." + id + ".tmp"
	put, perr := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(tmp), Body: strings.NewReader(body)})
	var cerr error
	if perr == nil {
		_, cerr = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(key),
			CopySource: aws.String("ckpt/" + tmp), CopySourceIfMatch: put.ETag})
	}
	// The temp is deleted whatever happened, as Spark's cancel() does: a
	// PUT answered 5xx may still have been applied by the backend.
	for attempt := 0; ; attempt++ {
		_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(tmp)})
		if err == nil {
			break
		}
		if attempt == 20 || httpStatus(err) < 500 && httpStatus(err) != 0 {
			return false, fmt.Errorf("delete temp %s: %w", tmp, err)
		}
	}
	if perr != nil {
		return false, fmt.Errorf("put temp %s: %w", tmp, perr)
	}
	if httpStatus(cerr) == http.StatusPreconditionFailed {
		return false, nil
	}
	if cerr != nil {
		return false, fmt.Errorf("copy onto %s: %w", key, cerr)
	}
	return true, nil
}

// httpStatus is the HTTP status of an SDK error (0: no response).
func httpStatus(err error) int { return s3atrace.StatusCode(err) }

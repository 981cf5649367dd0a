package s3serve_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/ckgate/ckgate/gateway"
)

// driver is a Spark driver process with S3A auditing on: every request
// carries the audit referrer naming its process id.
func driver(endpoint, process string) *s3.Client {
	ref := "https://audit.example.org/hadoop/1/op_create/3c0d9b7e-3/?op=op_create&p1=s3a://ckpt/q1&pr=orders&ps=" + process + "&id=3c0d9b7e-3&t0=12&ts=1617116985923"
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("ORDERSJOB", "orders-secret-0123456789", ""),
		Retryer:      aws.NopRetryer{},
		APIOptions:   []func(*middleware.Stack) error{smithyhttp.AddHeaderValue("Referer", ref)},
	})
}

// TestServeFencesZombieDriver: a driver restarted as a new process commits
// over the old one; the old process (a zombie still running) is refused
// from then on, its state writes and log entries alike, by rule CKG-P015.
func TestServeFencesZombieDriver(t *testing.T) {
	ep, dir := serve(t)
	ctx := context.Background()
	old, restarted := driver(ep, "235865a0-d399-4696-9978-64568db1b51c"), driver(ep, "7f1e2d3c-0000-4000-8000-000000000001")
	for _, k := range []string{"q1/metadata", "q1/offsets/0", "q1/commits/0"} {
		if err := s3aCommit(ctx, old, k, "v1\n{}", "a"); err != nil {
			t.Fatalf("first driver %s: %v", k, err)
		}
	}
	// Before the new driver commits, both may write (only atomicity decides).
	if err := s3aCommit(ctx, old, "q1/state/0/0/1.delta", "x", "a"); err != nil {
		t.Fatalf("first driver state: %v", err)
	}
	for _, k := range []string{"q1/offsets/1", "q1/commits/1"} {
		if err := s3aCommit(ctx, restarted, k, "v1\n{}", "b"); err != nil {
			t.Fatalf("restarted driver %s: %v", k, err)
		}
	}
	var rec gateway.Committer
	data, err := os.ReadFile(filepath.Join(dir, "ckpt", "q1", filepath.FromSlash(gateway.CommitterKey)))
	if err != nil || json.Unmarshal(data, &rec) != nil {
		t.Fatalf("committer record %q: %v", data, err)
	}
	if rec.Process != "7f1e2d3c-0000-4000-8000-000000000001" || rec.Batch != 1 || !slices.Contains(rec.Fenced, "235865a0-d399-4696-9978-64568db1b51c") {
		t.Fatalf("committer record %+v", rec)
	}
	for _, k := range []string{"q1/state/0/0/2.delta", "q1/offsets/2"} {
		err := s3aCommit(ctx, old, k, "zombie", "z")
		if status(err) != 403 || !strings.Contains(err.Error(), "CKG-P015") {
			t.Fatalf("zombie writes %s: %v (HTTP %d), want 403 naming CKG-P015", k, err, status(err))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "q1", "offsets", "2")); err == nil {
		t.Fatal("the zombie's offsets/2 was written")
	}
	for _, k := range []string{"q1/offsets/2", "q1/state/0/0/2.delta", "q1/commits/2"} {
		if err := s3aCommit(ctx, restarted, k, "v1\n{}", "b"); err != nil {
			t.Fatalf("restarted driver %s: %v", k, err)
		}
	}
	_, err = restarted.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/" + gateway.CommitterKey), Body: strings.NewReader(`{"process":"x","batch":99}`)})
	if status(err) != 403 || !strings.Contains(err.Error(), "CKG-P014") {
		t.Fatalf("client writes the committer record: %v, want 403 naming CKG-P014", err)
	}
}

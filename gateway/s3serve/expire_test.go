package s3serve_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestServeExpireUploads: an abandoned upload (a crashed executor's
// RocksDB SST) is aborted once it is older than the cutoff, parts and
// record, and nothing else is touched: a younger upload stays and
// completes, and an upload whose record is corrupt expires by the time of
// its newest part.
func TestServeExpireUploads(t *testing.T) {
	dir := bucketDir(t)
	srv, endpoint := startServer(t, dir, nil, nil)
	ctx := context.Background()
	c := client(endpoint, "ORDERSJOB", "orders-secret-0123456789")

	old, _, _ := mpu(t, c, "q1/state/0/0/SSTs/000001.sst", 1<<10)
	broken, _, _ := mpu(t, c, "q1/state/0/0/SSTs/000002.sst", 1<<10)
	rec := filepath.Join(dir, "ckpt", "_ckgate", "multipart", broken, "upload")
	if err := os.WriteFile(rec, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}

	if n, err := srv.ExpireUploads(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("expire with a cutoff an hour ago: %d aborted, %v; want 0, nil", n, err)
	}
	if left := hiddenLeft(t, dir); len(left) != 6 {
		t.Fatalf("hidden objects after a no-op expiry: %v; want the 2 uploads' records, parts and part records", left)
	}

	cutoff := time.Now().Add(time.Second)
	young, parts, _ := mpu(t, c, "q1/state/0/0/1.zip", 1<<10)
	// The young upload's record says it was initiated after the cutoff.
	if err := os.WriteFile(filepath.Join(dir, "ckpt", "_ckgate", "multipart", young, "upload"),
		[]byte(`{"key":"q1/state/0/0/1.zip","access_key":"ORDERSJOB","initiated":"`+cutoff.Add(time.Minute).UTC().Format(time.RFC3339Nano)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := srv.ExpireUploads(ctx, cutoff)
	if err != nil || n != 2 {
		t.Fatalf("expire: %d aborted, %v; want the old and the broken upload (2)", n, err)
	}
	for _, id := range []string{old, broken} {
		for _, p := range hiddenLeft(t, dir) {
			if strings.Contains(p, id) {
				t.Fatalf("expired upload %s left %s behind", id, p)
			}
		}
		_, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/state/0/0/SSTs/000001.sst"),
			UploadId: aws.String(id), PartNumber: aws.Int32(2), Body: nil})
		if code(err) != "NoSuchUpload" {
			t.Fatalf("part of expired upload %s: %v; want NoSuchUpload", id, err)
		}
	}
	lu, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("ckpt")})
	if err != nil || len(lu.Uploads) != 1 || *lu.Uploads[0].UploadId != young {
		t.Fatalf("uploads after expiry: %+v, %v; want only the young one", lu, err)
	}
	if _, err := complete(c, "q1/state/0/0/1.zip", young, parts, nil); err != nil {
		t.Fatalf("complete the young upload after the expiry: %v", err)
	}
	if left := hiddenLeft(t, dir); len(left) != 0 {
		t.Fatalf("hidden objects at the end: %v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "README")); errors.Is(err, os.ErrNotExist) {
		t.Fatal("the expiry deleted a client object")
	}
}

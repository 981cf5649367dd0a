package s3serve_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// hiddenLeft lists what the front door keeps under the bucket's reserved
// prefix on disk.
func hiddenLeft(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	root := filepath.Join(dir, "ckpt", "_ckgate", "multipart")
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	return left
}

// TestServeMultipartTransferManager uploads 20 MiB in 5 MiB parts with the
// SDK's transfer manager, through the guard, and reads it back.
func TestServeMultipartTransferManager(t *testing.T) {
	endpoint, dir := serve(t)
	ctx := context.Background()
	c := client(endpoint, "ORDERSJOB", "orders-secret-0123456789")
	data := randomBytes(t, 20<<20)
	tm := transfermanager.New(c, func(o *transfermanager.Options) { o.PartSizeBytes = 5 << 20; o.Concurrency = 3 })
	if _, err := tm.UploadObject(ctx, &transfermanager.UploadObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/state/0/0/1.zip"), Body: bytes.NewReader(data)}); err != nil {
		t.Fatalf("upload: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "ckpt", "q1", "state", "0", "0", "1.zip"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("stored object: %d bytes, err %v; want the 20 MiB uploaded", len(got), err)
	}
	if left := hiddenLeft(t, dir); len(left) != 0 {
		t.Fatalf("parts left after Complete: %v", left)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/state/0/0/1.zip")})
	if err != nil || *head.ContentLength != int64(len(data)) {
		t.Fatalf("head: %v", err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/state/0/0/1.zip"), IfMatch: head.ETag}); err != nil {
		t.Fatalf("GET with HEAD's ETag as If-Match: %v", err)
	}
}

// mpu creates an upload of key and uploads parts of the given sizes.
func mpu(t *testing.T, c *s3.Client, key string, sizes ...int) (string, []types.CompletedPart, []byte) {
	t.Helper()
	ctx := context.Background()
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("ckpt"), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("create %s: %v", key, err)
	}
	var parts []types.CompletedPart
	var all []byte
	for i, n := range sizes {
		b := randomBytes(t, n)
		all = append(all, b...)
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("ckpt"), Key: aws.String(key), UploadId: cr.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(b)})
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	return *cr.UploadId, parts, all
}

func complete(c *s3.Client, key, id string, parts []types.CompletedPart, tune func(*s3.CompleteMultipartUploadInput)) (*s3.CompleteMultipartUploadOutput, error) {
	in := &s3.CompleteMultipartUploadInput{Bucket: aws.String("ckpt"), Key: aws.String(key), UploadId: aws.String(id),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
	if tune != nil {
		tune(in)
	}
	return c.CompleteMultipartUpload(context.Background(), in)
}

func TestServeMultipartConditionsAndErrors(t *testing.T) {
	endpoint, dir := serve(t)
	ctx := context.Background()
	c := client(endpoint, "ORDERSJOB", "orders-secret-0123456789")
	other := client(endpoint, "BILLINGJOB", "billing-secret-0123456789")
	if err := s3aCommit(ctx, c, "q1/metadata", `{"id":"q"}`, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s3aCommit(ctx, c, "q1/offsets/0", "v1\nfirst", "b"); err != nil {
		t.Fatal(err)
	}

	// Complete onto an existing log entry: 412, the entry untouched, the
	// upload still there (a client may abort it).
	id, parts, _ := mpu(t, c, "q1/offsets/0", 10)
	if _, err := complete(c, "q1/offsets/0", id, parts, nil); status(err) != 412 {
		t.Fatalf("complete onto existing offsets/0: %v, want 412", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "ckpt", "q1", "offsets", "0")); string(b) != "v1\nfirst" {
		t.Fatalf("offsets/0 changed to %q", b)
	}
	// Another principal may not touch the upload.
	if _, err := complete(other, "q1/offsets/0", id, parts, nil); code(err) != "AccessDenied" {
		t.Fatalf("complete by another key: %v, want AccessDenied", err)
	}
	if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/offsets/0"), UploadId: &id}); err != nil {
		t.Fatalf("abort: %v", err)
	}
	if left := hiddenLeft(t, dir); len(left) != 0 {
		t.Fatalf("abort left %v", left)
	}
	if _, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/offsets/0"), UploadId: &id}); code(err) != "NoSuchUpload" {
		t.Fatalf("list parts after abort: %v, want NoSuchUpload", err)
	}

	// A new log entry by multipart is create-only too: first wins.
	id, parts, body := mpu(t, c, "q1/offsets/1", 5<<20, 3)
	if _, err := complete(c, "q1/offsets/1", id, parts, func(in *s3.CompleteMultipartUploadInput) { in.IfNoneMatch = aws.String("*") }); err != nil {
		t.Fatalf("complete offsets/1: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "ckpt", "q1", "offsets", "1")); !bytes.Equal(b, body) {
		t.Fatalf("offsets/1 holds %d bytes, want %d", len(b), len(body))
	}

	// A part missing, a wrong ETag, parts out of order, a small part.
	id, parts, _ = mpu(t, c, "q1/state/0/0/2.zip", 5<<20, 5<<20)
	missing := append(append([]types.CompletedPart{}, parts...), types.CompletedPart{ETag: parts[0].ETag, PartNumber: aws.Int32(3)})
	if _, err := complete(c, "q1/state/0/0/2.zip", id, missing, nil); code(err) != "InvalidPart" {
		t.Fatalf("complete with a part missing: %v, want InvalidPart", err)
	}
	wrong := []types.CompletedPart{parts[0], {ETag: parts[0].ETag, PartNumber: aws.Int32(2)}}
	if _, err := complete(c, "q1/state/0/0/2.zip", id, wrong, nil); code(err) != "InvalidPart" {
		t.Fatalf("complete with a wrong ETag: %v, want InvalidPart", err)
	}
	if _, err := complete(c, "q1/state/0/0/2.zip", id, []types.CompletedPart{parts[1], parts[0]}, nil); code(err) != "InvalidPartOrder" {
		t.Fatalf("complete out of order: %v, want InvalidPartOrder", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "q1", "state", "0", "0", "2.zip")); !os.IsNotExist(err) {
		t.Fatalf("a failed Complete published the object: %v", err)
	}
	// The upload is listed for its creator only, and hidden from listings.
	lu, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("ckpt")})
	if err != nil || len(lu.Uploads) != 1 || *lu.Uploads[0].UploadId != id {
		t.Fatalf("list uploads: %+v, %v", lu, err)
	}
	if lu, _ := other.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("ckpt")}); len(lu.Uploads) != 0 {
		t.Fatalf("another key sees %d uploads", len(lu.Uploads))
	}
	lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/state/0/0/2.zip"), UploadId: &id})
	if err != nil || len(lp.Parts) != 2 || *lp.Parts[1].ETag != *parts[1].ETag || *lp.Parts[0].Size != 5<<20 {
		t.Fatalf("list parts: %+v, %v", lp, err)
	}
	lo, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("ckpt")})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range lo.Contents {
		if strings.HasPrefix(*o.Key, "_ckgate/") {
			t.Fatalf("listing shows the front door's record %s", *o.Key)
		}
	}
	// Clients cannot reach the parts directly.
	hidden := "_ckgate/multipart/" + id + "/part-00001"
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ckpt"), Key: &hidden}); code(err) != "NoSuchKey" {
		t.Fatalf("GET of a part: %v, want NoSuchKey", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: &hidden, Body: strings.NewReader("x")}); code(err) != "AccessDenied" {
		t.Fatalf("PUT over a part: %v, want AccessDenied", err)
	}
	// UploadPartCopy from an existing object, then Complete.
	cp, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/state/0/0/2.zip"), UploadId: &id,
		PartNumber: aws.Int32(3), CopySource: aws.String("ckpt/q1/offsets/0"), CopySourceRange: aws.String("bytes=0-1")})
	if err != nil {
		t.Fatalf("upload part copy: %v", err)
	}
	parts = append(parts, types.CompletedPart{ETag: cp.CopyPartResult.ETag, PartNumber: aws.Int32(3)})
	out, err := complete(c, "q1/state/0/0/2.zip", id, parts, nil)
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/state/0/0/2.zip"), IfMatch: out.ETag})
	if err != nil {
		t.Fatalf("GET with Complete's ETag as If-Match: %v", err)
	}
	b, _ := io.ReadAll(g.Body)
	g.Body.Close()
	if len(b) != 10<<20+2 || string(b[len(b)-2:]) != "v1" {
		t.Fatalf("object is %d bytes ending %q", len(b), b[len(b)-2:])
	}
	if left := hiddenLeft(t, dir); len(left) != 0 {
		t.Fatalf("parts left after Complete: %v", left)
	}
}

// TestServeMultipartChangedPartPublishesNothing: a part whose bytes change
// on the store after it was uploaded (another writer, a crash mid-write)
// fails the Complete with InvalidPart, and no object appears: the parts
// stream into one atomic write.
func TestServeMultipartChangedPartPublishesNothing(t *testing.T) {
	endpoint, dir := serve(t)
	c := client(endpoint, "ORDERSJOB", "orders-secret-0123456789")
	id, parts, _ := mpu(t, c, "q1/state/0/0/9.zip", 5<<20, 5<<20, 7)
	p := filepath.Join(dir, "ckpt", "_ckgate", "multipart", id, "part-00002")
	if err := os.WriteFile(p, randomBytes(t, 5<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := complete(c, "q1/state/0/0/9.zip", id, parts, nil); code(err) != "InvalidPart" {
		t.Fatalf("complete over a changed part: %v, want InvalidPart", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "q1", "state", "0", "0", "9.zip")); !os.IsNotExist(err) {
		t.Fatalf("a failed Complete published the object: %v", err)
	}
}

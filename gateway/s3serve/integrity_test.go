package s3serve_test

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func b64(b []byte) *string { s := base64.StdEncoding.EncodeToString(b); return &s }

// TestServeVerifiesBodyDigests: a PutObject or UploadPart whose body does
// not match the Content-MD5 or x-amz-checksum-* the client sent is refused
// with 400 BadDigest and stores nothing; a matching one is stored. Without
// the check, bytes corrupted on the way would become a checkpoint file.
func TestServeVerifiesBodyDigests(t *testing.T) {
	ep, dir := serve(t)
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	body := "v1\n{\"batchWatermarkMs\":0}\n"
	md := md5.Sum([]byte(body))
	crc := crc32.ChecksumIEEE([]byte(body))
	crcBytes := []byte{byte(crc >> 24), byte(crc >> 16), byte(crc >> 8), byte(crc)}
	for _, tc := range []struct {
		name string
		in   s3.PutObjectInput
		want string // "" stored
	}{
		{"wrong Content-MD5", s3.PutObjectInput{ContentMD5: b64(make([]byte, 16))}, "BadDigest"},
		{"wrong CRC32", s3.PutObjectInput{ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ChecksumCRC32: b64([]byte{1, 2, 3, 4})}, "BadDigest"},
		{"right Content-MD5", s3.PutObjectInput{ContentMD5: b64(md[:])}, ""},
		{"right CRC32", s3.PutObjectInput{ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ChecksumCRC32: b64(crcBytes)}, ""},
	} {
		key := "q1/state/0/0/" + strings.ReplaceAll(tc.name, " ", "-") + ".delta"
		in := tc.in
		in.Bucket, in.Key, in.Body = aws.String("ckpt"), aws.String(key), strings.NewReader(body)
		_, err := c.PutObject(ctx, &in)
		_, statErr := os.Stat(filepath.Join(dir, "ckpt", filepath.FromSlash(key)))
		switch {
		case tc.want != "" && (code(err) != tc.want || status(err) != 400):
			t.Errorf("PUT with a %s: %v; want 400 %s", tc.name, err, tc.want)
		case tc.want != "" && statErr == nil:
			t.Errorf("PUT with a %s stored %s", tc.name, key)
		case tc.want == "" && (err != nil || statErr != nil):
			t.Errorf("PUT with a %s: %v, stored: %v; want it stored", tc.name, err, statErr)
		}
	}
	id, _, _ := mpu(t, c, "q1/state/0/0/SSTs/000003.sst")
	_, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("ckpt"), Key: aws.String("q1/state/0/0/SSTs/000003.sst"), UploadId: &id,
		PartNumber: aws.Int32(1), Body: strings.NewReader(body), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ChecksumCRC32: b64([]byte{9, 9, 9, 9})})
	if code(err) != "BadDigest" {
		t.Errorf("UploadPart with a wrong CRC32: %v; want BadDigest", err)
	}
}

// TestServeKeyTooLong: a key longer than S3's 1024 bytes, or one with a
// segment longer than the local disk's names, is KeyTooLongError (what S3
// and versitygw's posix backend answer), not a generic InvalidArgument.
func TestServeKeyTooLong(t *testing.T) {
	ep, _ := serve(t)
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	for _, key := range []string{strings.Repeat("k", 1100), "data/" + strings.Repeat("s", 300)} {
		_, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(key), Body: strings.NewReader("x")})
		if code(err) != "KeyTooLongError" || status(err) != 400 {
			t.Errorf("PUT of a %d-byte key: %v; want 400 KeyTooLongError", len(key), err)
		}
	}
}

// TestServeRefusesWhatItDoesNotKeep: a write asking for object tags or an
// object lock is 501 NotImplemented and stores nothing, never a success
// that silently drops what was asked.
func TestServeRefusesWhatItDoesNotKeep(t *testing.T) {
	ep, dir := serve(t)
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("data/tagged"), Body: strings.NewReader("x"), Tagging: aws.String("team=orders")})
	if status(err) != 501 || code(err) != "NotImplemented" {
		t.Fatalf("PUT with tags: %v; want 501 NotImplemented", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "data", "tagged")); err == nil {
		t.Fatal("the tagged PUT stored the object")
	}
	_, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("ckpt"), Key: aws.String("data/locked"),
		ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: aws.Time(time.Now().Add(time.Hour))})
	if status(err) != 501 {
		t.Fatalf("multipart upload with an object lock: %v; want 501", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String("data/plain"), Body: strings.NewReader("x"),
		Metadata: map[string]string{"ckgate-write-id": "w1"}}); err != nil {
		t.Fatalf("PUT with user metadata (kept out, not refused): %v", err)
	}
}

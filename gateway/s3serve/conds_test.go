package s3serve_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestServeTimeConditions: If-Modified-Since and If-Unmodified-Since on
// GET and HEAD, and their copy-source forms, are honoured in S3's order of
// precedence, never ignored (an ignored If-Unmodified-Since would let a
// client read or copy an object it asked not to). A copy whose source
// condition says "not modified" answers 304, as versitygw's suite wants
// (CopyObject_conditional_reads); either way nothing is copied.
func TestServeTimeConditions(t *testing.T) {
	ep, _ := serve(t)
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	b, k := aws.String("ckpt"), aws.String("data/a.txt")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("hello")}); err != nil {
		t.Fatal(err)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	mod, past, future := *h.LastModified, h.LastModified.Add(-time.Hour), h.LastModified.Add(time.Hour)
	get := func(in s3.GetObjectInput) int {
		in.Bucket, in.Key = b, k
		o, err := c.GetObject(ctx, &in)
		if err == nil {
			o.Body.Close()
			return 200
		}
		return status(err)
	}
	head := func(in s3.HeadObjectInput) int {
		in.Bucket, in.Key = b, k
		if _, err := c.HeadObject(ctx, &in); err != nil {
			return status(err)
		}
		return 200
	}
	for _, tc := range []struct {
		name string
		in   s3.GetObjectInput
		want int
	}{
		{"modified since an hour ago", s3.GetObjectInput{IfModifiedSince: &past}, 200},
		{"not modified since its Last-Modified", s3.GetObjectInput{IfModifiedSince: &mod}, 304},
		{"a future If-Modified-Since is ignored (RFC 9110)", s3.GetObjectInput{IfModifiedSince: &future}, 200},
		{"unmodified since an hour ahead", s3.GetObjectInput{IfUnmodifiedSince: &future}, 200},
		{"modified after an hour ago", s3.GetObjectInput{IfUnmodifiedSince: &past}, 412},
		{"If-Match wins over a false If-Unmodified-Since", s3.GetObjectInput{IfMatch: h.ETag, IfUnmodifiedSince: &past}, 200},
		{"If-None-Match wins over a true If-Modified-Since", s3.GetObjectInput{IfNoneMatch: h.ETag, IfModifiedSince: &past}, 304},
		{"a stale If-Match", s3.GetObjectInput{IfMatch: aws.String(`"stale"`)}, 412},
	} {
		if got := get(tc.in); got != tc.want {
			t.Errorf("GET %s: %d, want %d", tc.name, got, tc.want)
		}
		hin := s3.HeadObjectInput{IfMatch: tc.in.IfMatch, IfNoneMatch: tc.in.IfNoneMatch, IfModifiedSince: tc.in.IfModifiedSince, IfUnmodifiedSince: tc.in.IfUnmodifiedSince}
		if got := head(hin); got != tc.want {
			t.Errorf("HEAD %s: %d, want %d", tc.name, got, tc.want)
		}
	}
	copyTo := func(dst string, in s3.CopyObjectInput) int {
		in.Bucket, in.Key, in.CopySource = b, aws.String(dst), aws.String("ckpt/data/a.txt")
		if _, err := c.CopyObject(ctx, &in); err != nil {
			return status(err)
		}
		return 200
	}
	for i, tc := range []struct {
		name string
		in   s3.CopyObjectInput
		want int
	}{
		{"source unmodified since an hour ahead", s3.CopyObjectInput{CopySourceIfUnmodifiedSince: &future}, 200},
		{"source modified after an hour ago", s3.CopyObjectInput{CopySourceIfUnmodifiedSince: &past}, 412},
		{"source not modified since its Last-Modified", s3.CopyObjectInput{CopySourceIfModifiedSince: &mod}, 304},
		{"source matching If-None-Match", s3.CopyObjectInput{CopySourceIfNoneMatch: h.ETag}, 304},
		{"source If-Match wins over a false If-Unmodified-Since", s3.CopyObjectInput{CopySourceIfMatch: h.ETag, CopySourceIfUnmodifiedSince: &past}, 200},
	} {
		if got := copyTo("data/copy-"+string(rune('a'+i)), tc.in); got != tc.want {
			t.Errorf("COPY %s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestServeHeadRangeAndType: HEAD answers a Range or partNumber=1 as GET
// does (206, Content-Range, the range's length), a partNumber past the one
// part is refused, and every object's Content-Type is S3's default rather
// than one Go's server sniffs from the bytes.
func TestServeHeadRangeAndType(t *testing.T) {
	ep, _ := serve(t)
	c := client(ep, "ORDERSJOB", "orders-secret-0123456789")
	ctx := context.Background()
	b, k := aws.String("ckpt"), aws.String("data/a.txt")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("hello world")}); err != nil {
		t.Fatal(err)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, Range: aws.String("bytes=00-01")})
	if err != nil || aws.ToInt64(h.ContentLength) != 2 || aws.ToString(h.ContentRange) != "bytes 0-1/11" {
		t.Fatalf("HEAD bytes=00-01: %+v, %v; want length 2, Content-Range bytes 0-1/11", h, err)
	}
	h, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, PartNumber: aws.Int32(1)})
	if err != nil || aws.ToInt64(h.ContentLength) != 11 || aws.ToString(h.ContentRange) != "bytes 0-10/11" {
		t.Fatalf("HEAD partNumber=1: %+v, %v; want the whole object as its one part", h, err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, PartNumber: aws.Int32(2)}); status(err) != 416 {
		t.Fatalf("HEAD partNumber=2: %v; want 416", err)
	}
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	g.Body.Close()
	if aws.ToString(g.ContentType) != "binary/octet-stream" {
		t.Fatalf("GET Content-Type %q; want binary/octet-stream", aws.ToString(g.ContentType))
	}
}

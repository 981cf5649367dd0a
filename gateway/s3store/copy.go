package s3store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/ckgate/ckgate/gateway"
)

var _ gateway.CopyDriver = (*driver)(nil)

// Copy stores src's content under dst. An unconditional copy is one
// CopyObject, pinned to srcVersion with x-amz-copy-source-if-match, which
// every S3 server here evaluates with the copy. A copy under IfAbsent or
// IfMatch is one CopyObject with If-None-Match / If-Match only on Amazon S3
// itself (see condCopy): S3-compatible servers may ignore those headers on a
// copy and overwrite (versitygw 1.8 does), so elsewhere the copy is a
// GetObject of src (pinned to its ETag) streamed into PutStream(dst, c),
// whose conditions every server honours; so is a source larger than a copy
// takes (5 GiB) and a conditional copy Amazon S3 answers with 501.
func (s *driver) Copy(ctx context.Context, src, dst string, srcVersion gateway.Version, c gateway.Cond) (gateway.Version, error) {
	if c.Kind != gateway.CondNone && !s.condCopy {
		return s.streamCopy(ctx, src, dst, srcVersion, c)
	}
	ifMatch, ifNoneMatch := condHeaders(c)
	id := rand.Text()
	in := &s3.CopyObjectInput{
		Bucket:            &s.bucket,
		Key:               s.full(dst),
		CopySource:        aws.String(copySource(s.bucket, src)),
		MetadataDirective: types.MetadataDirectiveReplace,
		Metadata:          map[string]string{writeIDMeta: id},
		IfMatch:           ifMatch,
		IfNoneMatch:       ifNoneMatch,
	}
	if srcVersion != "" {
		in.CopySourceIfMatch = aws.String(string(srcVersion))
	}
	ambiguous := false
	for attempt := 0; ; attempt++ {
		var t tracker
		out, err := s.client.CopyObject(ctx, in, t.option)
		ambiguous = ambiguous || t.ambiguous
		if err == nil {
			if out.CopyObjectResult != nil && out.CopyObjectResult.ETag != nil {
				return version(out.CopyObjectResult.ETag), nil
			}
			h, err := s.head(ctx, dst)
			if err != nil {
				return "", fail("copy", dst, err)
			}
			return version(h.ETag), nil
		}
		switch {
		case errorCode(err) == codeConditionConflict && attempt < s.conflictRetries:
			if werr := s.wait(ctx, attempt); werr != nil {
				return "", gateway.E("copy", dst, gateway.ErrUnavailable, errors.Join(err, werr))
			}
			continue
		case tooLargeToCopy(err), c.Kind != gateway.CondNone && errorCode(err) == "NotImplemented":
			return s.streamCopy(ctx, src, dst, srcVersion, c)
		case errorCode(err) == "NoSuchKey" || classify(err) == gateway.ErrPrecondition:
			return s.copyRefused(ctx, src, dst, srcVersion, c, id, ambiguous, err)
		}
		return "", copyFailed(dst, src, err)
	}
}

// copyRefused tells which side refused a copy: a missing or changed
// source (checked with HeadObject: ErrNotFound, ErrPrecondition, naming
// src), or else dst's condition, settled like a refused Put (the copy carries a write id).
func (s *driver) copyRefused(ctx context.Context, src, dst string, srcVersion gateway.Version, c gateway.Cond, id string, ambiguous bool, err error) (gateway.Version, error) {
	h, herr := s.head(ctx, src)
	switch {
	case herr != nil && missing(herr):
		return "", gateway.E("copy", src, gateway.ErrNotFound, fmt.Errorf("the source is absent: %w", err))
	case herr == nil && srcVersion != "" && !sameVersion(version(h.ETag), srcVersion):
		return "", gateway.E("copy", src, gateway.ErrPrecondition, fmt.Errorf("the source is at %s, not %s: %w", version(h.ETag), srcVersion, err))
	case c.Kind == gateway.CondNone:
		return "", copyFailed(dst, src, err)
	}
	r := gateway.Refused{Op: "copy", Key: dst, Cond: c, Err: err, Retried: ambiguous}
	return r.Settle(ctx, func(ctx context.Context) (gateway.Version, bool, error) {
		h, err := s.head(ctx, dst)
		if err != nil {
			return "", false, err
		}
		return version(h.ETag), h.Metadata[writeIDMeta] == id, nil
	}, missing)
}

// streamCopy reads src (only while its ETag is srcVersion, when given) and
// writes it under dst with PutStream, under c. A failed read leaves dst
// untouched, as PutStream does for any failing stream.
func (s *driver) streamCopy(ctx context.Context, src, dst string, srcVersion gateway.Version, c gateway.Cond) (gateway.Version, error) {
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: s.full(src)}
	if srcVersion != "" {
		in.IfMatch = aws.String(string(srcVersion))
	}
	var t tracker
	out, err := s.client.GetObject(ctx, in, t.option)
	if err != nil {
		return "", fail("copy", src, err) // absent, stale or unreadable: the source's
	}
	b := &body{rc: out.Body, key: src, s: s, ctx: ctx, etag: out.ETag, end: -1, attempts: 1}
	defer b.Close()
	return s.PutStream(ctx, dst, b, c)
}

// copyFailed is the error of a copy to dst from src.
func copyFailed(dst, src string, err error) error {
	return gateway.E("copy", dst, classify(err), fmt.Errorf("from %s: %w", src, err))
}

// tooLargeToCopy reports S3 refusing a source over the copy limit (5 GiB
// on Amazon S3, the copy threshold on versitygw).
func tooLargeToCopy(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "InvalidRequest" &&
		strings.Contains(ae.ErrorMessage(), "copy source is larger")
}

// copySource spells bucket/key for x-amz-copy-source: every byte but the
// unreserved ones and '/' percent-encoded, which path and query decoding
// (servers use either; '+' differs) read alike.
func copySource(bucket, key string) string {
	var b strings.Builder
	for _, c := range []byte(bucket + "/" + key) {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// awsEndpoint reports whether a client's endpoint is Amazon S3's own (no
// custom endpoint, or an amazonaws.com host such as a VPC endpoint): the
// service that evaluates If-None-Match and If-Match on CopyObject.
func awsEndpoint(endpoint *string) bool {
	e := aws.ToString(endpoint)
	if e == "" {
		return true
	}
	u, err := url.Parse(e)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return strings.HasSuffix(h, ".amazonaws.com") || strings.HasSuffix(h, ".amazonaws.com.cn")
}

package s3store

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
)

// condHeaders returns the If-Match and If-None-Match values of c.
func condHeaders(c gateway.Cond) (ifMatch, ifNoneMatch *string) {
	switch c.Kind {
	case gateway.CondIfAbsent:
		return nil, aws.String("*")
	case gateway.CondIfMatch:
		return aws.String(string(c.Version)), nil
	}
	return nil, nil
}

// refused reports whether err is S3 refusing the condition of a write:
// 412 PreconditionFailed, or, for If-Match, 404 NoSuchKey (S3 answers
// If-Match on a missing key with 404; the contract calls it a stale version).
func refused(c gateway.Cond, err error) bool {
	switch {
	case c.Kind == gateway.CondNone:
		return false
	case classify(err) == gateway.ErrPrecondition:
		return true
	}
	return c.Kind == gateway.CondIfMatch && errorCode(err) == "NoSuchKey"
}

// Put stores data under key with one PutObject. IfAbsent sends
// If-None-Match: *, IfMatch sends If-Match: <etag>; S3 evaluates them
// atomically with the write.
func (s *driver) Put(ctx context.Context, key string, data []byte, c gateway.Cond) (gateway.Version, error) {
	ifMatch, ifNoneMatch := condHeaders(c)
	// A fresh id in the object's metadata tells this write from another
	// writer's with the same bytes when a refusal is read back.
	id := rand.Text()
	ambiguous := false
	for attempt := 0; ; attempt++ {
		var t tracker
		out, err := s.client.PutObject(ctx, &s3.PutObjectInput{
			Bucket:        &s.bucket,
			Key:           s.full(key),
			Body:          bytes.NewReader(data),
			ContentLength: aws.Int64(int64(len(data))),
			IfMatch:       ifMatch,
			IfNoneMatch:   ifNoneMatch,
			Metadata:      map[string]string{writeIDMeta: id},
		}, t.option)
		ambiguous = ambiguous || t.ambiguous
		if err == nil {
			return version(out.ETag), nil
		}
		if errorCode(err) == codeConditionConflict && attempt < s.conflictRetries {
			// A concurrent conditional write is in flight: not "exists";
			// ask again once it has settled.
			if werr := s.wait(ctx, attempt); werr != nil {
				return "", gateway.E("put", key, gateway.ErrUnavailable, errors.Join(err, werr))
			}
			continue
		}
		if refused(c, err) {
			r := gateway.Refused{Op: "put", Key: key, Cond: c, Err: err, Retried: ambiguous}
			return r.Settle(ctx, func(ctx context.Context) (gateway.Version, bool, error) {
				h, err := s.head(ctx, key)
				if err != nil {
					return "", false, err
				}
				return version(h.ETag), h.Metadata[writeIDMeta] == id, nil
			}, missing)
		}
		return "", fail("put", key, err)
	}
}

// missing reports whether a read-back error says the key is absent.
func missing(err error) bool { return classify(err) == gateway.ErrNotFound }

// writeIDMeta is the user-metadata name (x-amz-meta-ckgate-write-id) of a
// Put's write id.
const writeIDMeta = "ckgate-write-id"

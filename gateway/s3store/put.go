package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"

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

// lostKind is the kind of a conditional write refused with 412.
func lostKind(c gateway.Cond) error {
	if c.Kind == gateway.CondIfAbsent {
		return gateway.ErrExists
	}
	return gateway.ErrPrecondition
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
func (s *Store) Put(ctx context.Context, key string, data []byte, c gateway.Cond) (gateway.Version, error) {
	if err := gateway.ValidateKey("put", key); err != nil {
		return "", err
	}
	if err := gateway.CheckPutCond(key, c); err != nil {
		return "", err
	}
	return s.putObject(ctx, key, data, c)
}

func (s *Store) putObject(ctx context.Context, key string, data []byte, c gateway.Cond) (gateway.Version, error) {
	ifMatch, ifNoneMatch := condHeaders(c)
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
			return s.settle(ctx, key, c, ambiguous, err, func(ctx context.Context) (gateway.Version, bool, error) {
				got, v, err := s.rawGet(ctx, key)
				if err != nil {
					return "", false, err
				}
				return v, bytes.Equal(got, data), nil
			})
		}
		return "", fail("put", key, err)
	}
}

// settle decides a conditional write that S3 refused with 412. Without an
// earlier attempt of unknown outcome it is a lost race (ErrExists for
// IfAbsent, ErrPrecondition for IfMatch). After one (the SDK retried a
// timeout or a 5xx) the refusal may be our own first write seen by its
// retry: mine reads the stored object and reports whether it is ours. If it
// is, the write succeeded; if the read fails, the outcome is unknown and the
// error is ErrUnavailable, never a false "exists".
func (s *Store) settle(ctx context.Context, key string, c gateway.Cond, ambiguous bool, refusal error,
	mine func(context.Context) (gateway.Version, bool, error)) (gateway.Version, error) {
	if !ambiguous {
		return "", gateway.E("put", key, lostKind(c), refusal)
	}
	v, ok, err := mine(ctx)
	switch {
	case err != nil && classify(err) != gateway.ErrNotFound:
		return "", gateway.E("put", key, gateway.ErrUnavailable,
			fmt.Errorf("outcome unknown: an attempt timed out or failed, its retry was refused (%v), and reading the key back failed: %w", refusal, err))
	case ok:
		return v, nil
	}
	return "", gateway.E("put", key, lostKind(c), refusal)
}

// rawGet is Get returning the SDK's error unwrapped.
func (s *Store) rawGet(ctx context.Context, key string) ([]byte, gateway.Version, error) {
	var t tracker
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: s.full(key)}, t.option)
	if err != nil {
		return nil, "", err
	}
	defer out.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(out.Body); err != nil {
		return nil, "", err
	}
	return b.Bytes(), version(out.ETag), nil
}

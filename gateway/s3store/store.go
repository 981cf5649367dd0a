package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/ckgate/ckgate/gateway"
)

// Store is a gateway.Store on one S3 bucket, optionally under a key prefix:
// the portable gateway.Bucket over the S3 driver. It is safe for concurrent
// use. Create it with Open or New.
type Store struct {
	*gateway.Bucket
	d *driver
}

// driver holds what the S3 operations need; gateway.Bucket does the rest.
type driver struct {
	client   *s3.Client
	bucket   string
	partSize int64

	// conflictRetries bounds the retries of a conditional write answered
	// with 409 ConditionalRequestConflict; backoff is the first delay.
	conflictRetries int
	backoff         time.Duration

	// condCopy: the service evaluates If-None-Match and If-Match on
	// CopyObject atomically with the copy (Amazon S3; see Copy).
	condCopy bool
}

// Store is a gateway.Store (and, through its Bucket, a BucketMaker and a
// Closer) over driver.
var (
	_ gateway.Store  = (*Store)(nil)
	_ gateway.Driver = (*driver)(nil)
)

// New returns a Store on bucket using client. Keys are stored as
// prefix+key; prefix is a relative key prefix such as "team/query-1" (a
// trailing '/' is added). Errors name the caller's key, without the prefix.
func New(client *s3.Client, bucket, prefix string) *Store {
	d := &driver{
		client:          client,
		bucket:          bucket,
		partSize:        DefaultPartSize,
		conflictRetries: 8,
		backoff:         25 * time.Millisecond,
		condCopy:        awsEndpoint(client.Options().BaseEndpoint),
	}
	return &Store{Bucket: gateway.NewBucket(d, prefix), d: d}
}

// Client returns the SDK client the store uses.
func (s *Store) Client() *s3.Client { return s.d.client }

// BucketName returns the bucket name.
func (s *Store) BucketName() string { return s.d.bucket }

// BucketLifecycle reads the bucket's lifecycle configuration (see the
// driver's).
func (s *Store) BucketLifecycle(ctx context.Context) ([]byte, error) { return s.d.BucketLifecycle(ctx) }

// Kind classifies an SDK error; a refused condition was told from a lost
// race where the write was made (see refused).
func (s *driver) Kind(err error, _ gateway.Cond) error { return classify(err) }

func (s *driver) full(name string) *string { return aws.String(name) }

// version turns an ETag into a Version, always in its quoted form so that
// Put, Get, Stat and List agree whatever the server returned.
func version(etag *string) gateway.Version {
	e := aws.ToString(etag)
	if e == "" {
		return ""
	}
	if !strings.HasPrefix(e, `"`) && !strings.HasPrefix(e, `W/`) {
		e = `"` + e + `"`
	}
	return gateway.Version(e)
}

// sameVersion compares two ETags, ignoring quoting.
func sameVersion(a, b gateway.Version) bool {
	return strings.Trim(string(a), `"`) == strings.Trim(string(b), `"`)
}

// Get reads the whole object.
func (s *driver) Get(ctx context.Context, key string) ([]byte, gateway.Version, error) {
	return s.get(ctx, "get", key)
}

// bodyAttempts bounds the GETs of one Get whose body was cut short: the
// SDK retries a request, not the reading of its body.
const bodyAttempts = 3

func (s *driver) get(ctx context.Context, op, key string) ([]byte, gateway.Version, error) {
	for attempt := 1; ; attempt++ {
		var t tracker
		out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: s.full(key)}, t.option)
		if err != nil {
			return nil, "", fail(op, key, err)
		}
		b, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err == nil {
			return b, version(out.ETag), nil
		}
		if attempt >= bodyAttempts || ctx.Err() != nil {
			return nil, "", gateway.E(op, key, gateway.ErrUnavailable,
				fmt.Errorf("reading the body (attempt %d of %d): %w", attempt, bodyAttempts, err))
		}
	}
}

// Stat reads the object's attributes with HeadObject.
func (s *driver) Stat(ctx context.Context, key string) (gateway.Attrs, error) {
	out, err := s.head(ctx, key)
	if err != nil {
		return gateway.Attrs{}, fail("stat", key, err)
	}
	return gateway.Attrs{
		Key:      key,
		Size:     aws.ToInt64(out.ContentLength),
		Version:  version(out.ETag),
		Modified: aws.ToTime(out.LastModified),
	}, nil
}

func (s *driver) head(ctx context.Context, key string) (*s3.HeadObjectOutput, error) {
	var t tracker
	return s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: s.full(key)}, t.option)
}

// GetStream opens the object for reading. Read errors from the body are
// reported as *gateway.Error of kind ErrUnavailable.
func (s *driver) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	var t tracker
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: s.full(key)}, t.option)
	if err != nil {
		return nil, gateway.Attrs{}, fail("get", key, err)
	}
	a := gateway.Attrs{
		Key:      key,
		Size:     aws.ToInt64(out.ContentLength),
		Version:  version(out.ETag),
		Modified: aws.ToTime(out.LastModified),
	}
	return &body{rc: out.Body, key: key, s: s, ctx: ctx, etag: out.ETag, end: -1, attempts: 1}, a, nil
}

// body is a GetObject body that resumes where it was cut (a connection
// lost mid-body, which the SDK does not retry) with a ranged GET on the
// same ETag, up to bodyAttempts GETs in all. It reads the object's bytes
// from start to end (inclusive; -1: to the end).
type body struct {
	rc         io.ReadCloser
	key        string
	s          *driver
	ctx        context.Context
	etag       *string
	start, end int64
	read       int64
	attempts   int
}

// rest is the Range header of what is left to read.
func (b *body) rest() string {
	r := fmt.Sprintf("bytes=%d-", b.start+b.read)
	if b.end >= 0 {
		r += strconv.FormatInt(b.end, 10)
	}
	return r
}

func (b *body) Read(p []byte) (int, error) {
	for {
		n, err := b.rc.Read(p)
		b.read += int64(n)
		if err == nil || err == io.EOF {
			return n, err
		}
		if n > 0 {
			return n, nil // report the bytes; the next Read meets the error again
		}
		if b.attempts >= bodyAttempts || b.ctx.Err() != nil || b.etag == nil {
			return 0, gateway.E("get", b.key, gateway.ErrUnavailable,
				fmt.Errorf("reading the body at byte %d (GET %d of %d): %w", b.read, b.attempts, bodyAttempts, err))
		}
		b.attempts++
		b.rc.Close()
		var t tracker
		out, gerr := b.s.client.GetObject(b.ctx, &s3.GetObjectInput{
			Bucket: &b.s.bucket, Key: b.s.full(b.key),
			Range:   aws.String(b.rest()),
			IfMatch: b.etag, // the same object, or a precondition failure
		}, t.option)
		if gerr != nil {
			b.rc = io.NopCloser(errReader{fail("get", b.key, gerr)})
			b.attempts = bodyAttempts
			continue
		}
		b.rc = out.Body
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func (b *body) Close() error { return b.rc.Close() }

// Delete removes key. S3 answers a DELETE of a missing key with success, so
// Delete first reads the current ETag (HeadObject: missing → ErrNotFound,
// another ETag than c's → ErrPrecondition) and then deletes with If-Match
// on that ETag, so a write that lands in between is never deleted blindly:
// a stale IfMatch gets ErrPrecondition, and an unconditional Delete starts
// over on the new object.
func (s *driver) Delete(ctx context.Context, key string, c gateway.Cond) error {
	for attempt := 0; ; attempt++ {
		h, err := s.head(ctx, key)
		if err != nil {
			return fail("delete", key, err)
		}
		current := version(h.ETag)
		if c.Kind == gateway.CondIfMatch && !sameVersion(current, c.Version) {
			return gateway.E("delete", key, gateway.ErrPrecondition, nil)
		}
		in := &s3.DeleteObjectInput{Bucket: &s.bucket, Key: s.full(key)}
		if c.Kind == gateway.CondIfMatch {
			in.IfMatch = aws.String(string(c.Version))
		} else if current != "" {
			in.IfMatch = aws.String(string(current))
		}
		var t tracker
		_, err = s.client.DeleteObject(ctx, in, t.option)
		if err == nil {
			return nil
		}
		code := errorCode(err)
		retry := code == codeConditionConflict ||
			// an unconditional delete lost a race with an overwrite: delete that
			c.Kind == gateway.CondNone && classify(err) == gateway.ErrPrecondition
		if retry && attempt < s.conflictRetries {
			if werr := s.wait(ctx, attempt); werr != nil {
				return gateway.E("delete", key, gateway.ErrUnavailable, errors.Join(err, werr))
			}
			continue
		}
		if c.Kind == gateway.CondNone && classify(err) == gateway.ErrPrecondition {
			// Overwritten between every read and delete: busy, not stale.
			return gateway.E("delete", key, gateway.ErrUnavailable, err)
		}
		if c.Kind == gateway.CondNone && classify(err) == gateway.ErrUnsupported {
			// The service refuses If-Match on DELETE; the caller asked for
			// no condition, so a plain delete is what was requested.
			_, err = s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: s.full(key)}, t.option)
			if err == nil {
				return nil
			}
		}
		return fail("delete", key, err)
	}
}

// wait sleeps before retry attempt+1 (exponential, capped at 2s), or
// returns the context's error.
func (s *driver) wait(ctx context.Context, attempt int) error {
	d := s.backoff << min(attempt, 6)
	if d > 2*time.Second {
		d = 2 * time.Second
	}
	return gateway.Sleep(ctx, d)
}

// MakeBucket creates the bucket (in the client's region). A bucket that
// already exists and is owned by the caller, or that the caller can reach
// without the right to create buckets, is success.
func (s *driver) MakeBucket(ctx context.Context) error {
	in := &s3.CreateBucketInput{Bucket: &s.bucket}
	if r := s.client.Options().Region; r != "" && r != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(r),
		}
	}
	var t tracker
	_, err := s.client.CreateBucket(ctx, in, t.option)
	if err == nil || errorCode(err) == "BucketAlreadyOwnedByYou" {
		return nil
	}
	if classify(err) == gateway.ErrPermission {
		var t tracker
		if _, herr := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket}, t.option); herr == nil {
			return nil
		}
	}
	return fail("make-bucket", s.bucket, err)
}

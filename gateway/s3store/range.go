package s3store

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
)

var _ gateway.RangeDriver = (*driver)(nil)

// GetRange reads n bytes of key from off (n < 0: to the end) with one
// GetObject carrying a Range header; the body resumes a cut connection on
// the same ETag, as GetStream's does. Size is the object's, from the
// Content-Range total. S3 refuses a range that starts at or past the end
// with 416 InvalidRange: that is an empty read, with the attributes of a
// HeadObject. A zero-length range is a HeadObject alone.
func (s *driver) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, gateway.Attrs, error) {
	if n == 0 {
		return gateway.EmptyRange(ctx, s.Stat, key)
	}
	end := int64(-1)
	if n > 0 && n <= math.MaxInt64-off {
		end = off + n - 1
	}
	b := &body{key: key, s: s, ctx: ctx, start: off, end: end, attempts: 1}
	var t tracker
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: &s.bucket, Key: s.full(key), Range: aws.String(b.rest()),
	}, t.option)
	if err != nil {
		if errorCode(err) == "InvalidRange" || httpStatus(err) == http.StatusRequestedRangeNotSatisfiable {
			return gateway.EmptyRange(ctx, s.Stat, key)
		}
		return nil, gateway.Attrs{}, fail("get", key, err)
	}
	a := gateway.Attrs{
		Key:      key,
		Version:  version(out.ETag),
		Modified: aws.ToTime(out.LastModified),
	}
	total, ok := gateway.ContentRangeSize(aws.ToString(out.ContentRange))
	if ok {
		a.Size = total
		b.rc, b.etag = out.Body, out.ETag
		return b, a, nil
	}
	// No Content-Range: the server sent the whole object (a range it
	// ignored, or an empty object). Skip to off and stop after n; a
	// resumed GET could not be trusted to honour a range either.
	a.Size = aws.ToInt64(out.ContentLength)
	if _, err := io.CopyN(io.Discard, out.Body, min(off, a.Size)); err != nil {
		out.Body.Close()
		return nil, gateway.Attrs{}, gateway.E("get", key, gateway.ErrUnavailable, fmt.Errorf("skipping to byte %d: %w", off, err))
	}
	b.rc = out.Body
	var r io.Reader = b
	if end >= 0 {
		r = io.LimitReader(b, n)
	}
	return readCloser{r, b}, a, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

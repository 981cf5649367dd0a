package s3serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/versity/versitygw/s3response"

	"github.com/ckgate/ckgate/gateway"
)

// ExpireUploads aborts every multipart upload, in every bucket, that was
// initiated before cutoff (S3's AbortIncompleteMultipartUpload): its parts
// and its record are deleted, and a later UploadPart or Complete of it is
// NoSuchUpload. An upload whose record is missing or unreadable (a crash
// between its writes) counts as initiated when its newest part was
// written. A Complete racing the expiry fails and publishes nothing: its
// destination is written in one atomic PutStream of the parts. It returns
// how many uploads it aborted; an error on one upload does not stop the
// others (they are joined).
func (s *Server) ExpireUploads(ctx context.Context, cutoff time.Time) (int, error) {
	return s.be.expireUploads(detach(ctx), cutoff)
}

func (b *storeBackend) expireUploads(ctx context.Context, cutoff time.Time) (int, error) {
	buckets, err := b.ListBuckets(ctx, s3response.ListBucketsInput{})
	if err != nil {
		return 0, fmt.Errorf("expire uploads: list buckets: %w", err)
	}
	n := 0
	var errs []error
	for _, bk := range buckets.Buckets.Bucket {
		k, err := b.expireBucketUploads(ctx, bk.Name, cutoff)
		n += k
		if err != nil {
			errs = append(errs, fmt.Errorf("expire uploads of bucket %s: %w", bk.Name, err))
		}
	}
	return n, errors.Join(errs...)
}

// pendingUpload is what the listing of a bucket's hidden multipart
// prefix says of one upload.
type pendingUpload struct {
	record bool
	newest time.Time
}

func (b *storeBackend) expireBucketUploads(ctx context.Context, bucket string, cutoff time.Time) (int, error) {
	base := objectKey(bucket, multipartPrefix)
	uploads := map[string]*pendingUpload{}
	var order []string
	for a, err := range b.raw.List(ctx, base) {
		if err != nil {
			return 0, err
		}
		id, name, ok := strings.Cut(strings.TrimPrefix(a.Key, base), "/")
		if !ok {
			continue
		}
		u := uploads[id]
		if u == nil {
			u = &pendingUpload{}
			uploads[id] = u
			order = append(order, id)
		}
		u.record = u.record || name == "upload"
		if a.Modified.After(u.newest) {
			u.newest = a.Modified
		}
	}
	n := 0
	var errs []error
	for _, id := range order {
		u := uploads[id]
		initiated := u.newest
		if u.record {
			if t, ok := b.initiated(ctx, bucket, id); ok {
				initiated = t
			}
		}
		if !initiated.Before(cutoff) {
			continue
		}
		if err := b.dropUpload(ctx, bucket, id); err != nil {
			errs = append(errs, fmt.Errorf("upload %s: %w", id, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// initiated reads when an upload was created, from its record.
func (b *storeBackend) initiated(ctx context.Context, bucket, id string) (time.Time, bool) {
	data, _, err := gateway.GetBounded(ctx, b.raw, uploadDir(bucket, id)+"upload", maxUploadRecord)
	if err != nil {
		return time.Time{}, false
	}
	var u uploadRecord
	if json.Unmarshal(data, &u) != nil || u.Initiated.IsZero() {
		return time.Time{}, false
	}
	return u.Initiated, true
}

// maxUploadRecord bounds the read of an upload record (a key of at most
// 1 KiB, an access key and a time).
const maxUploadRecord = 8 << 10

package s3serve

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"

	"github.com/ckgate/ckgate/gateway"
)

// listing is one page of a bucket listing.
type listing struct {
	objects   []s3response.Object
	prefixes  []types.CommonPrefix
	truncated bool
	next      string // the last key or common prefix of the page
}

// list pages through bucket/prefix in lexical order after the key after,
// grouping keys by delimiter, at most max entries (objects and prefixes).
func (b *storeBackend) list(ctx context.Context, bucket, prefix, delim, after string, max int) (listing, error) {
	var l listing
	if err := b.bucketExists(ctx, bucket); err != nil {
		return l, err
	}
	if max <= 0 {
		return l, nil
	}
	base := bucket + "/"
	lastPrefix := ""
	for a, err := range b.raw.List(ctx, base+prefix) {
		if err != nil {
			return l, s3Error(err)
		}
		key := strings.TrimPrefix(a.Key, base)
		if reservedKey(key) || frontDoorRecord(key) || key <= after {
			continue
		}
		if delim != "" {
			if i := strings.Index(key[len(prefix):], delim); i >= 0 {
				cp := key[:len(prefix)+i+len(delim)]
				if cp == lastPrefix || cp <= after {
					continue
				}
				if len(l.objects)+len(l.prefixes) == max {
					l.truncated = true
					return l, nil
				}
				lastPrefix = cp
				l.prefixes = append(l.prefixes, types.CommonPrefix{Prefix: &cp})
				l.next = cp
				continue
			}
		}
		if len(l.objects)+len(l.prefixes) == max {
			l.truncated = true
			return l, nil
		}
		k, size, mod := key, a.Size, a.Modified
		l.objects = append(l.objects, s3response.Object{Key: &k, Size: &size, LastModified: &mod, ETag: etag(a.Version), StorageClass: types.ObjectStorageClassStandard})
		l.next = key
	}
	return l, nil
}

func maxKeys(p *int32) int {
	if p == nil || *p > 1000 {
		return 1000
	}
	return int(*p)
}

func (b *storeBackend) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input) (s3response.ListObjectsV2Result, error) {
	ctx = detach(ctx)
	after := str(in.StartAfter)
	if t := str(in.ContinuationToken); t != "" {
		k, err := base64.RawURLEncoding.DecodeString(t)
		if err != nil {
			return s3response.ListObjectsV2Result{}, s3err.APIError{Code: "InvalidArgument", Description: "the continuation token is not one this server gave", HTTPStatusCode: 400}
		}
		after = string(k)
	}
	max := maxKeys(in.MaxKeys)
	l, err := b.list(ctx, str(in.Bucket), str(in.Prefix), str(in.Delimiter), after, max)
	if err != nil {
		return s3response.ListObjectsV2Result{}, err
	}
	n, m := int32(len(l.objects)+len(l.prefixes)), int32(max)
	out := s3response.ListObjectsV2Result{
		Name: in.Bucket, Prefix: in.Prefix, StartAfter: in.StartAfter, ContinuationToken: in.ContinuationToken,
		Delimiter: in.Delimiter, KeyCount: &n, MaxKeys: &m, IsTruncated: &l.truncated,
		Contents: l.objects, CommonPrefixes: l.prefixes,
	}
	if l.truncated {
		t := base64.RawURLEncoding.EncodeToString([]byte(l.next))
		out.NextContinuationToken = &t
	}
	return out, nil
}

func (b *storeBackend) ListObjects(ctx context.Context, in *s3.ListObjectsInput) (s3response.ListObjectsResult, error) {
	ctx = detach(ctx)
	max := maxKeys(in.MaxKeys)
	l, err := b.list(ctx, str(in.Bucket), str(in.Prefix), str(in.Delimiter), str(in.Marker), max)
	if err != nil {
		return s3response.ListObjectsResult{}, err
	}
	m := int32(max)
	out := s3response.ListObjectsResult{
		Name: in.Bucket, Prefix: in.Prefix, Marker: in.Marker, Delimiter: in.Delimiter, MaxKeys: &m,
		IsTruncated: &l.truncated, Contents: l.objects, CommonPrefixes: l.prefixes,
	}
	if l.truncated {
		out.NextMarker = &l.next
	}
	return out, nil
}

// frontDoorRecord reports whether key is one of the records the front door
// keeps under a root (its owner, its committer): listings leave them out,
// as S3 clients did not write them.
func frontDoorRecord(key string) bool {
	for _, r := range []string{gateway.RootOwnerKey, gateway.CommitterKey} {
		if key == r || strings.HasSuffix(key, "/"+r) {
			return true
		}
	}
	return false
}

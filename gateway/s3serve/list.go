package s3serve

import (
	"context"
	"encoding/base64"
	"slices"
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
	next      string // the store name of the last entry of the page (inside the bucket)
}

// list returns one page of bucket/prefix after the store name after (see
// storeAfter), grouping keys by delimiter, at most max entries (objects
// and prefixes) in the client's names. Each backend page is one
// gateway.ListPage (a continuation costs one page, not a rescan); when
// hidden keys (the front door's own records) leave a page short, the next
// backend page fills it, so max-keys is honoured. Directory markers are
// listed as the client wrote them ("dir/").
func (b *storeBackend) list(ctx context.Context, bucket, prefix, delim, after string, max int) (listing, error) {
	var l listing
	if err := b.freshBucket(ctx, bucket); err != nil {
		return l, err
	}
	if max <= 0 {
		return l, nil
	}
	base := bucket + "/"
	for {
		pg, err := gateway.ListPage(ctx, b.raw, base+prefix, delim, base+after, max-len(l.objects)-len(l.prefixes))
		if err != nil {
			return l, s3Error(err)
		}
		for _, a := range pg.Objects {
			key := strings.TrimPrefix(a.Key, base)
			l.next = key
			if hiddenKey(key) {
				continue
			}
			k, size, mod := clientKey(key), a.Size, a.Modified
			l.objects = append(l.objects, s3response.Object{Key: &k, Size: &size, LastModified: &mod, ETag: etag(a.Version), StorageClass: types.ObjectStorageClassStandard})
		}
		for _, p := range pg.Prefixes {
			cp := strings.TrimPrefix(p, base)
			if ok, err := b.holdsVisible(ctx, base, cp); err != nil {
				return l, err
			} else if ok {
				l.prefixes = append(l.prefixes, types.CommonPrefix{Prefix: &cp})
			}
		}
		if pg.Truncated {
			after = strings.TrimPrefix(pg.Next, base)
			l.next = after
		}
		if !pg.Truncated || len(l.objects)+len(l.prefixes) == max {
			l.truncated = pg.Truncated
			break
		}
	}
	// A directory marker's client name ("dir/") sorts before the names
	// of its directory that its store name (dir/.dir.ckgate) follows.
	slices.SortStableFunc(l.objects, func(x, y s3response.Object) int { return strings.Compare(*x.Key, *y.Key) })
	return l, nil
}

// ckgateDir is the directory of ckgate's own keys, where the hidden ones live.
const ckgateDir = "_ckgate"

// hiddenKey reports whether a key inside a bucket is one S3 clients never
// see: the front door's reserved keys and records.
func hiddenKey(key string) bool { return reservedKey(key) || frontDoorRecord(key) }

// holdsVisible reports whether the common prefix cp holds a key clients
// see. Only a prefix whose last segment is ckgate's own directory can hold
// hidden keys alone; it is probed, every other one holds what it grouped.
func (b *storeBackend) holdsVisible(ctx context.Context, base, cp string) (bool, error) {
	if cp != ckgateDir+"/" && !strings.HasSuffix(cp, "/"+ckgateDir+"/") {
		return true, nil
	}
	for a, err := range b.raw.List(ctx, base+cp) {
		if err != nil {
			return false, s3Error(err)
		}
		if !hiddenKey(strings.TrimPrefix(a.Key, base)) {
			return true, nil
		}
	}
	return false, nil
}

// storedKey is the store name (inside its bucket) of a client's object
// key: a key ending in '/' (a directory marker, as Hadoop's mkdirs writes
// it) is stored as gateway.DirMarkerKey; any other key as itself.
func storedKey(key string) string {
	if strings.HasSuffix(key, "/") && strings.Trim(key, "/") != "" {
		return gateway.DirMarkerKey(key)
	}
	return key
}

// clientKey is the client's name of a store name: storedKey's inverse.
func clientKey(stored string) string {
	if dir, ok := gateway.DirMarker(stored); ok {
		return dir
	}
	return stored
}

// storeAfter is the store name a client's start-after (or V1 marker)
// continues from: a directory marker's own name continues after its store
// name, a common prefix after everything it groups.
func storeAfter(prefix, delim, after string) string {
	if !strings.HasSuffix(after, "/") || strings.Trim(after, "/") == "" {
		return after
	}
	if delim != "" && strings.HasPrefix(after, prefix) && len(after) > len(prefix) && strings.Contains(after[len(prefix):], delim) {
		return after // a common prefix: skip all it holds
	}
	return storedKey(after)
}

func maxKeys(p *int32) int {
	if p == nil || *p > 1000 {
		return 1000
	}
	return int(*p)
}

func (b *storeBackend) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input) (s3response.ListObjectsV2Result, error) {
	ctx = detach(ctx)
	after := storeAfter(str(in.Prefix), str(in.Delimiter), str(in.StartAfter))
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
	l, err := b.list(ctx, str(in.Bucket), str(in.Prefix), str(in.Delimiter), storeAfter(str(in.Prefix), str(in.Delimiter), str(in.Marker)), max)
	if err != nil {
		return s3response.ListObjectsResult{}, err
	}
	m := int32(max)
	out := s3response.ListObjectsResult{
		Name: in.Bucket, Prefix: in.Prefix, Marker: in.Marker, Delimiter: in.Delimiter, MaxKeys: &m,
		IsTruncated: &l.truncated, Contents: l.objects, CommonPrefixes: l.prefixes,
	}
	if l.truncated {
		next := clientKey(l.next)
		out.NextMarker = &next
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

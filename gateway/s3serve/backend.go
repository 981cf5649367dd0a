package s3serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/versity/versitygw/auth"
	vbackend "github.com/versity/versitygw/backend"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"

	"github.com/ckgate/ckgate/gateway"
)

// bucketMarker is the key CreateBucket writes inside a new bucket, so that
// an empty bucket exists on stores without directories. Listings hide it.
const bucketMarker = "_ckgate/bucket"

// storeBackend is versitygw's backend.Backend over a ckgate store: each
// bucket is a first-level prefix of the store. Reads go to the store;
// every mutation goes to the principal's guarded store. What it does not
// implement answers NotImplemented (BackendUnsupported).
type storeBackend struct {
	vbackend.BackendUnsupported
	raw   gateway.Store
	creds *Credentials
	guard func(Principal) (gateway.Store, error)

	mu      sync.Mutex
	guarded map[string]gateway.Store

	// unmarked holds the buckets found by a listing without a marker (made
	// outside the front door), which are looked up by listing at once.
	// Only buckets that exist get in, so it stays as small as the store's
	// top level; a marker written later (another replica) only costs the
	// listing it would have saved.
	unmarked sync.Map

	// present holds when each bucket was last seen to exist: for
	// bucketTTL after that a request takes it as existing without asking
	// the store (S3's own bucket deletion reaches other requests
	// eventually too). A DeleteBucket through this server drops it at
	// once; one through another replica is seen within bucketTTL. It
	// never stands in for a decision: owners, log entries and conditions
	// are always read from the store.
	present   sync.Map // bucket → time.Time
	bucketTTL time.Duration
}

// defaultBucketTTL is Config.BucketTTL's default.
const defaultBucketTTL = 2 * time.Second

func (b *storeBackend) String() string { return "ckgate" }

// writer is the guarded store of the principal that signed the request.
func (b *storeBackend) writer(ctx context.Context) (gateway.Store, error) {
	acc, ok := ctx.Value(accountKey{}).(auth.Account)
	if !ok {
		return nil, s3err.GetAPIError(s3err.ErrAccessDenied)
	}
	p, ok := b.creds.Lookup(acc.Access)
	if !ok {
		return nil, s3err.GetAPIError(s3err.ErrAccessDenied)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.guarded[p.AccessKey]; ok {
		return s, nil
	}
	s, err := b.guard(p)
	if err != nil {
		return nil, s3err.APIError{Code: "InternalError", Description: fmt.Sprintf("guard for %s: %v", p.ID, err), HTTPStatusCode: 500}
	}
	b.guarded[p.AccessKey] = s
	return s, nil
}

type accountKey struct{}

// detach returns a context for the store and the policy that carries the
// signing account only. versitygw hands the backend fasthttp's RequestCtx,
// which is recycled after the request and whose Done races with the
// server's shutdown; and an in-flight write should finish on shutdown, not
// be cancelled half-way (a store write is atomic either way).
func detach(ctx context.Context) context.Context {
	acc, ok := ctx.Value("account").(auth.Account)
	if !ok {
		return context.Background()
	}
	d := gateway.WithWriterProcess(context.WithValue(context.Background(), accountKey{}, acc), referrerProcess(ctx))
	if bucket, ok := ctx.Value(bucketSeenKey{}).(string); ok {
		d = context.WithValue(d, bucketSeenKey{}, bucket)
	}
	return d
}

// bucketSeenKey marks a request with the bucket its ACL check found, so
// that the request's handler does not look for the bucket again (a listing
// of the store per look).
type bucketSeenKey struct{}

// markBucket marks the request ctx (fasthttp's RequestCtx, whose values
// live as long as the request) with bucket.
func markBucket(ctx context.Context, bucket string) {
	if rc, ok := ctx.(interface{ SetUserValue(key, value any) }); ok {
		rc.SetUserValue(bucketSeenKey{}, bucket)
	}
}

func objectKey(bucket, key string) string { return bucket + "/" + key }

// refusedKey reports whether a client's object key is one no client may
// name: the front door's reserved keys, and a directory marker's store
// name (a client writes a marker as "dir/", see storedKey).
func refusedKey(key string) bool { return reservedKey(key) || gateway.IsDirMarker(key) }

// etag is v as an S3 ETag, quoted once: a store's version may carry the
// quotes already (s3store keeps S3's own ETags quoted).
func etag(v gateway.Version) *string { s := `"` + string(unquote(string(v))) + `"`; return &s }

func unquote(s string) gateway.Version {
	return gateway.Version(strings.Trim(strings.TrimSpace(s), `"`))
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// validBucket refuses a bucket name that is not one first-level prefix of
// the store.
func validBucket(bucket string) error {
	if bucket == "" || strings.ContainsAny(bucket, "/\\") || bucket == "." || bucket == ".." {
		return s3err.GetAPIError(s3err.ErrInvalidBucketName)
	}
	return nil
}

// bucketExists reports whether any key lies under bucket/: its marker
// (one Stat; one HEAD on an object store) or, for a bucket that is a
// directory made outside the front door (or a prefix written without
// ckgate serve), the first key of a listing (without the Stat once the
// bucket is known to have no marker). A request whose ACL check found the
// bucket is not asked again.
func (b *storeBackend) bucketExists(ctx context.Context, bucket string) error {
	return b.lookupBucket(ctx, bucket, true)
}

// freshBucket is bucketExists asking the store even for a bucket seen a
// moment ago: what a request about the bucket itself (HEAD, create,
// delete, list, its ACL check) does, so it always answers for the store
// as it is.
func (b *storeBackend) freshBucket(ctx context.Context, bucket string) error {
	return b.lookupBucket(ctx, bucket, false)
}

func (b *storeBackend) lookupBucket(ctx context.Context, bucket string, cached bool) error {
	if err := validBucket(bucket); err != nil {
		return err
	}
	if seen, _ := ctx.Value(bucketSeenKey{}).(string); seen == bucket {
		return nil
	}
	if t, ok := b.present.Load(bucket); cached && ok && time.Since(t.(time.Time)) < b.bucketTTL {
		return nil
	}
	_, unmarked := b.unmarked.Load(bucket)
	if !unmarked {
		switch _, err := b.raw.Stat(ctx, objectKey(bucket, bucketMarker)); {
		case err == nil:
			b.seen(bucket)
			return nil
		case !errors.Is(err, gateway.ErrNotFound):
			return s3Error(err)
		}
	}
	for _, err := range b.raw.List(ctx, bucket+"/") {
		if err != nil {
			return s3Error(err)
		}
		if !unmarked {
			b.unmarked.Store(bucket, true)
		}
		b.seen(bucket)
		return nil
	}
	return s3err.GetAPIError(s3err.ErrNoSuchBucket)
}

// seen records that bucket exists now (see present).
func (b *storeBackend) seen(bucket string) {
	if b.bucketTTL > 0 {
		b.present.Store(bucket, time.Now())
	}
}

// objectRead reports whether ctx is the request context (fasthttp's, as
// versitygw hands it to the backend) of a path-style GET or HEAD of an
// object: /BUCKET/KEY.
func objectRead(ctx context.Context) bool {
	r, ok := ctx.(interface {
		Method() []byte
		Path() []byte
	})
	if !ok {
		return false
	}
	if m := string(r.Method()); m != http.MethodGet && m != http.MethodHead {
		return false
	}
	_, key, _ := strings.Cut(strings.TrimPrefix(string(r.Path()), "/"), "/")
	return key != ""
}

// objectRequest reports whether ctx is the request context of a
// path-style request naming an object (/BUCKET/KEY), not a bucket.
func objectRequest(ctx context.Context) bool {
	r, ok := ctx.(interface{ Path() []byte })
	if !ok {
		return false
	}
	_, key, _ := strings.Cut(strings.TrimPrefix(string(r.Path()), "/"), "/")
	return key != ""
}

// missing is the error of a read of bucket/key that the store answered
// not-found: NoSuchBucket when the bucket does not exist, else NoSuchKey.
// Reads look for the object first, so a read of an existing object costs
// one store request.
func (b *storeBackend) missing(ctx context.Context, bucket string, err error) error {
	if !errors.Is(err, gateway.ErrNotFound) {
		return s3Error(err)
	}
	if berr := b.bucketExists(ctx, bucket); berr != nil {
		return berr
	}
	return s3Error(err)
}

// ListBuckets lists the store's first-level prefixes a page at a time
// (one store page per 1,000 buckets, never a walk of every key), each
// with the time of its marker (when CreateBucket wrote one).
func (b *storeBackend) ListBuckets(ctx context.Context, _ s3response.ListBucketsInput) (s3response.ListAllMyBucketsResult, error) {
	ctx = detach(ctx)
	var out s3response.ListAllMyBucketsResult
	for after := ""; ; {
		page, err := gateway.ListPage(ctx, b.raw, "", "/", after, 1000)
		if err != nil {
			return out, s3Error(err)
		}
		for _, p := range page.Prefixes {
			name := strings.TrimSuffix(p, "/")
			e := s3response.ListAllMyBucketsEntry{Name: name}
			if a, err := b.raw.Stat(ctx, objectKey(name, bucketMarker)); err == nil {
				e.CreationDate = a.Modified
			}
			out.Buckets.Bucket = append(out.Buckets.Bucket, e)
		}
		if !page.Truncated {
			return out, nil
		}
		after = page.Next
	}
}

func (b *storeBackend) HeadBucket(ctx context.Context, in *s3.HeadBucketInput) (*s3.HeadBucketOutput, error) {
	ctx = detach(ctx)
	if err := b.freshBucket(ctx, str(in.Bucket)); err != nil {
		return nil, err
	}
	return &s3.HeadBucketOutput{}, nil
}

// GetBucketAcl answers versitygw's ACL middleware, which asks before every
// request but CreateBucket and ListBuckets (and before versitygw checks the
// request's arguments): the bucket exists and is owned by the caller
// (versitygw's checks step aside; the guard decides). For a GET or HEAD of
// an object it does not look at the store: the read itself tells a missing
// bucket from a missing key, so reading an existing object costs one store
// request.
func (b *storeBackend) GetBucketAcl(ctx context.Context, in *s3.GetBucketAclInput) ([]byte, error) {
	bucket := str(in.Bucket)
	if objectRead(ctx) {
		if err := validBucket(bucket); err != nil {
			return nil, err
		}
		return []byte(`{"Owner":"ckgate","Grantees":[]}`), nil
	}
	lookup := b.freshBucket
	if objectRequest(ctx) {
		lookup = b.bucketExists
	}
	if err := lookup(detach(ctx), bucket); err != nil {
		return nil, err
	}
	markBucket(ctx, bucket)
	return []byte(`{"Owner":"ckgate","Grantees":[]}`), nil
}

func (b *storeBackend) GetBucketPolicy(context.Context, string) ([]byte, error) {
	return nil, s3err.GetAPIError(s3err.ErrNoSuchBucketPolicy)
}

func (b *storeBackend) GetBucketVersioning(context.Context, string) (s3response.GetBucketVersioningOutput, error) {
	return s3response.GetBucketVersioningOutput{}, nil
}

func (b *storeBackend) GetObjectLockConfiguration(context.Context, string) ([]byte, error) {
	return nil, s3err.GetAPIError(s3err.ErrObjectLockConfigurationNotFound)
}

func (b *storeBackend) GetBucketCors(context.Context, string) ([]byte, error) {
	return nil, s3err.GetAPIError(s3err.ErrNoSuchCORSConfiguration)
}

func (b *storeBackend) CreateBucket(ctx context.Context, in *s3.CreateBucketInput, _ []byte) error {
	ctx = detach(ctx)
	bucket := str(in.Bucket)
	switch err := b.freshBucket(ctx, bucket); {
	case err == nil:
		return s3err.GetAPIError(s3err.ErrBucketAlreadyOwnedByYou)
	case !isAPIError(err, "NoSuchBucket"):
		return err
	}
	w, err := b.writer(ctx)
	if err != nil {
		return err
	}
	_, err = w.Put(ctx, objectKey(bucket, bucketMarker), nil, gateway.IfAbsent())
	if errors.Is(err, gateway.ErrExists) {
		return s3err.GetAPIError(s3err.ErrBucketAlreadyOwnedByYou)
	}
	return s3Error(err)
}

// readName is the stored name of an object a read (HEAD, GET) asks for,
// after the checks both make: a bad bucket name is refused, and a key the
// front door keeps for itself reads as absent (NoSuchKey, or NoSuchBucket
// when the bucket is missing too).
func (b *storeBackend) readName(ctx context.Context, bucketp, keyp *string) (bucket, name string, err error) {
	bucket, key := str(bucketp), str(keyp)
	if err := validBucket(bucket); err != nil {
		return "", "", err
	}
	if refusedKey(key) {
		return "", "", b.missing(ctx, bucket, gateway.ErrNotFound)
	}
	return bucket, objectKey(bucket, storedKey(key)), nil
}

func isAPIError(err error, code string) bool {
	var a s3err.APIError
	return errors.As(err, &a) && a.Code == code
}

func (b *storeBackend) HeadObject(ctx context.Context, in *s3.HeadObjectInput) (*s3.HeadObjectOutput, error) {
	ctx = detach(ctx)
	bucket, name, err := b.readName(ctx, in.Bucket, in.Key)
	if err != nil {
		return nil, err
	}
	a, err := b.raw.Stat(ctx, name)
	if err != nil {
		return nil, b.missing(ctx, bucket, err)
	}
	if err := readConds(a, in.IfMatch, in.IfNoneMatch, in.IfModifiedSince, in.IfUnmodifiedSince); err != nil {
		return nil, err
	}
	_, length, cr, err := objectRange(a.Size, str(in.Range), in.PartNumber)
	if err != nil {
		return nil, err
	}
	out := &s3.HeadObjectOutput{ContentLength: &length, ContentRange: cr, ETag: etag(a.Version), LastModified: &a.Modified,
		ContentType: aws.String(defaultContentType), AcceptRanges: &acceptRanges}
	return out, nil
}

// readConds applies a read's If-Match, If-None-Match, If-Modified-Since
// and If-Unmodified-Since as S3 does, in S3's order of precedence
// (versitygw's EvaluatePreconditions): 412 PreconditionFailed or 304
// NotModified. Times compare at the second, the resolution of the
// Last-Modified a client got and sends back.
func readConds(a gateway.Attrs, ifMatch, ifNoneMatch *string, ifModSince, ifUnmodSince *time.Time) error {
	return vbackend.EvaluatePreconditions(string(unquote(string(a.Version))), a.Modified.Truncate(time.Second), vbackend.PreConditions{
		IfMatch: unquoted(ifMatch), IfNoneMatch: unquoted(ifNoneMatch), IfModSince: ifModSince, IfUnmodeSince: ifUnmodSince})
}

// unquoted is an ETag condition without its quotes ("*" stays "*").
func unquoted(p *string) *string {
	if p == nil {
		return nil
	}
	s := strings.TrimSpace(*p)
	if s != "*" {
		s = string(unquote(s))
	}
	return &s
}

func (b *storeBackend) GetObject(ctx context.Context, in *s3.GetObjectInput) (*s3.GetObjectOutput, error) {
	ctx = detach(ctx)
	bucket, name, err := b.readName(ctx, in.Bucket, in.Key)
	if err != nil {
		return nil, err
	}
	rc, a, start, err := b.openRange(ctx, name, str(in.Range))
	if err != nil {
		return nil, b.missing(ctx, bucket, err)
	}
	if err := readConds(a, in.IfMatch, in.IfNoneMatch, in.IfModifiedSince, in.IfUnmodifiedSince); err != nil {
		rc.Close()
		return nil, err
	}
	from, length, partial, err := vbackend.ParseObjectRange(a.Size, str(in.Range))
	if err != nil {
		rc.Close()
		return nil, err
	}
	if from != start {
		// The range is one the size decides (a suffix, or ignored): read
		// it again from where it starts.
		rc.Close()
		if rc, a, err = b.reopen(ctx, name, from, a.Version); err != nil {
			return nil, s3Error(err)
		}
	}
	out := &s3.GetObjectOutput{ETag: etag(a.Version), LastModified: &a.Modified, ContentLength: &length, AcceptRanges: &acceptRanges,
		ContentType: aws.String(defaultContentType)}
	if partial {
		cr := fmt.Sprintf("bytes %d-%d/%d", from, from+length-1, a.Size)
		out.ContentRange = &cr
	}
	out.Body = readCloser{io.LimitReader(rc, length), rc}
	return out, nil
}

// acceptRanges is the Accept-Ranges of every object: byte ranges.
var acceptRanges = "bytes"

// openRange opens name for a GET with the Range header hdr: from the
// range's first byte when the header names it (one ranged read, nothing
// before it is read), else from the start. It returns where the reader
// starts.
func (b *storeBackend) openRange(ctx context.Context, name, hdr string) (io.ReadCloser, gateway.Attrs, int64, error) {
	start, length, partial, err := vbackend.ParseObjectRange(math.MaxInt64, hdr)
	if err != nil || !partial || strings.Contains(hdr, "=-") {
		rc, a, err := b.raw.GetStream(ctx, name)
		return rc, a, 0, err
	}
	if strings.HasSuffix(strings.TrimSpace(hdr), "-") { // bytes=N- : to the end
		length = -1
	}
	rc, a, err := gateway.GetRange(ctx, b.raw, name, start, length)
	return rc, a, start, err
}

// reopen opens name from off, refusing (412) when it no longer holds
// version v.
func (b *storeBackend) reopen(ctx context.Context, name string, off int64, v gateway.Version) (io.ReadCloser, gateway.Attrs, error) {
	rc, a, err := gateway.GetRange(ctx, b.raw, name, off, -1)
	if err == nil && a.Version != v {
		rc.Close()
		return nil, gateway.Attrs{}, gateway.E("get", name, gateway.ErrPrecondition, fmt.Errorf("changed while read: version %s, was %s", a.Version, v))
	}
	return rc, a, err
}

// putCond is the store condition of a write from S3's If-Match /
// If-None-Match. A write of a log entry with neither is create-only.
func putCond(key string, ifMatch, ifNoneMatch *string) (gateway.Cond, error) {
	switch {
	case ifNoneMatch != nil && ifMatch != nil:
		return gateway.Cond{}, s3err.APIError{Code: "NotImplemented", Description: "If-Match and If-None-Match together", HTTPStatusCode: 501}
	case ifNoneMatch != nil:
		if strings.TrimSpace(*ifNoneMatch) != "*" {
			return gateway.Cond{}, s3err.APIError{Code: "NotImplemented", Description: "If-None-Match other than *", HTTPStatusCode: 501}
		}
		return gateway.IfAbsent(), nil
	case ifMatch != nil:
		return gateway.IfMatch(unquote(*ifMatch)), nil
	case IsLogEntry(key):
		return gateway.IfAbsent(), nil
	}
	return gateway.None(), nil
}

func (b *storeBackend) PutObject(ctx context.Context, in s3response.PutObjectInput) (s3response.PutObjectOutput, error) {
	ctx = detach(ctx)
	bucket, key := str(in.Bucket), str(in.Key)
	if err := unkept(in.Tagging, in.ObjectLockMode, in.ObjectLockLegalHoldStatus, in.ObjectLockRetainUntilDate); err != nil {
		return s3response.PutObjectOutput{}, err
	}
	if err := b.bucketExists(ctx, bucket); err != nil {
		return s3response.PutObjectOutput{}, err
	}
	if refusedKey(key) {
		return s3response.PutObjectOutput{}, reservedError(key)
	}
	key = storedKey(key)
	cond, err := putCond(key, in.IfMatch, in.IfNoneMatch)
	if err != nil {
		return s3response.PutObjectOutput{}, err
	}
	w, err := b.writer(ctx)
	if err != nil {
		return s3response.PutObjectOutput{}, err
	}
	body, err := checksummed(in.Body, headerSums(in.ChecksumCRC32, in.ChecksumCRC32C, in.ChecksumSHA1, in.ChecksumSHA256, in.ChecksumCRC64NVME,
		in.ChecksumSHA512, in.ChecksumMD5, in.ChecksumXXHASH64, in.ChecksumXXHASH3, in.ChecksumXXHASH128))
	if err != nil {
		return s3response.PutObjectOutput{}, s3err.GetAPIError(s3err.ErrInvalidRequest)
	}
	sum := newSummingReader(body)
	v, err := w.PutStream(ctx, objectKey(bucket, key), sum, cond)
	if err != nil {
		own, ok := b.ownRetry(ctx, objectKey(bucket, key), in.Metadata, sum, err)
		if !ok {
			return s3response.PutObjectOutput{}, s3Error(err)
		}
		v = own
	}
	b.committed(ctx, bucket, key)
	return s3response.PutObjectOutput{ETag: *etag(v)}, nil
}

func (b *storeBackend) CopyObject(ctx context.Context, in s3response.CopyObjectInput) (s3response.CopyObjectOutput, error) {
	ctx = detach(ctx)
	tags := in.Tagging
	if in.TaggingDirective != types.TaggingDirectiveReplace {
		tags = nil // the source's tags (none: the front door keeps none)
	}
	if err := unkept(tags, in.ObjectLockMode, in.ObjectLockLegalHoldStatus, in.ObjectLockRetainUntilDate); err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	bucket, key := str(in.Bucket), str(in.Key)
	srcBucket, srcKey, srcVersion, err := vbackend.ParseCopySource(str(in.CopySource))
	if err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	if srcVersion != "" {
		return s3response.CopyObjectOutput{}, s3err.APIError{Code: "NotImplemented", Description: "copy of an object version", HTTPStatusCode: 501}
	}
	if err := b.bucketExists(ctx, bucket); err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	if err := b.bucketExists(ctx, srcBucket); err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	if refusedKey(key) || refusedKey(srcKey) {
		return s3response.CopyObjectOutput{}, reservedError(key)
	}
	if srcBucket == bucket && srcKey == key {
		return s3response.CopyObjectOutput{}, s3err.APIError{Code: "NotImplemented", Description: "copy of an object onto itself (metadata replacement)", HTTPStatusCode: 501}
	}
	key, src := storedKey(key), objectKey(srcBucket, storedKey(srcKey))
	// The source conditions are checked on a HEAD of the source (S3's
	// quoted ETags against the store's versions), and the version they
	// were checked on is the copy's source version: a source changed
	// since then fails the copy.
	var srcVer gateway.Version
	if in.CopySourceIfMatch != nil || in.CopySourceIfNoneMatch != nil || in.CopySourceIfModifiedSince != nil || in.CopySourceIfUnmodifiedSince != nil {
		a, err := b.raw.Stat(ctx, src)
		if err != nil {
			return s3response.CopyObjectOutput{}, s3Error(err)
		}
		if err := readConds(a, in.CopySourceIfMatch, in.CopySourceIfNoneMatch, in.CopySourceIfModifiedSince, in.CopySourceIfUnmodifiedSince); err != nil {
			return s3response.CopyObjectOutput{}, err
		}
		srcVer = a.Version
	}
	cond, err := putCond(key, nil, nil)
	if err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	w, err := b.writer(ctx)
	if err != nil {
		return s3response.CopyObjectOutput{}, err
	}
	// One copy in the store (server-side where the backend has one): the
	// destination condition and the source's version are the store's to
	// hold, and the write is decided as a put of the destination.
	v, err := gateway.Copy(ctx, w, src, objectKey(bucket, key), srcVer, cond)
	if err != nil {
		return s3response.CopyObjectOutput{}, s3Error(err)
	}
	b.committed(ctx, bucket, key)
	now := time.Now().UTC()
	return s3response.CopyObjectOutput{CopyObjectResult: &s3response.CopyObjectResult{ETag: etag(v), LastModified: &now}}, nil
}

func (b *storeBackend) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput) (*s3.DeleteObjectOutput, error) {
	ctx = detach(ctx)
	bucket, key := str(in.Bucket), str(in.Key)
	if err := b.bucketExists(ctx, bucket); err != nil {
		return nil, err
	}
	return &s3.DeleteObjectOutput{}, b.deleteKey(ctx, bucket, key, in.IfMatch)
}

// deleteKey deletes bucket/key through the guard: a missing key is a
// success (S3 answers 204), a stale If-Match is 412.
func (b *storeBackend) deleteKey(ctx context.Context, bucket, key string, ifMatch *string) error {
	if refusedKey(key) {
		return reservedError(key)
	}
	key = storedKey(key)
	w, err := b.writer(ctx)
	if err != nil {
		return err
	}
	cond := gateway.None()
	if ifMatch != nil {
		cond = gateway.IfMatch(unquote(*ifMatch))
	}
	err = w.Delete(ctx, objectKey(bucket, key), cond)
	if errors.Is(err, gateway.ErrNotFound) && ifMatch == nil {
		return nil
	}
	if errors.Is(err, gateway.ErrNotFound) {
		return s3err.GetAPIError(s3err.ErrPreconditionFailed)
	}
	return s3Error(err)
}

func (b *storeBackend) DeleteObjects(ctx context.Context, in *s3.DeleteObjectsInput) (s3response.DeleteResult, error) {
	ctx = detach(ctx)
	var out s3response.DeleteResult
	bucket := str(in.Bucket)
	if err := b.bucketExists(ctx, bucket); err != nil {
		return out, err
	}
	if in.Delete == nil {
		return out, s3err.GetAPIError(s3err.ErrMalformedXML)
	}
	for _, o := range in.Delete.Objects {
		k := str(o.Key)
		if err := b.deleteKey(ctx, bucket, k, o.ETag); err != nil {
			code, msg := "InternalError", err.Error()
			var a s3err.APIError
			if errors.As(err, &a) {
				code, msg = a.Code, a.Description
			}
			out.Error = append(out.Error, types.Error{Key: o.Key, Code: &code, Message: &msg})
			continue
		}
		out.Deleted = append(out.Deleted, types.DeletedObject{Key: o.Key})
	}
	return out, nil
}

// DeleteBucket deletes an empty bucket: one holding nothing but its
// marker (BucketNotEmpty otherwise).
func (b *storeBackend) DeleteBucket(ctx context.Context, bucket string) error {
	ctx = detach(ctx)
	if err := b.freshBucket(ctx, bucket); err != nil {
		return err
	}
	for a, err := range b.raw.List(ctx, bucket+"/") {
		if err != nil {
			return s3Error(err)
		}
		if !reservedKey(strings.TrimPrefix(a.Key, bucket+"/")) {
			return s3err.GetAPIError(s3err.ErrBucketNotEmpty)
		}
	}
	w, err := b.writer(ctx)
	if err != nil {
		return err
	}
	if err := b.dropUploads(ctx, bucket); err != nil {
		return err
	}
	b.present.Delete(bucket)
	if err := w.Delete(ctx, objectKey(bucket, bucketMarker), gateway.None()); err != nil && !errors.Is(err, gateway.ErrNotFound) {
		return s3Error(err)
	}
	b.present.Delete(bucket) // and once more, for a request that saw it meanwhile
	b.unmarked.Delete(bucket)
	return nil
}

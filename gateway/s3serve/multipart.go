package s3serve

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/versity/versitygw/auth"
	vbackend "github.com/versity/versitygw/backend"
	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"

	"github.com/ckgate/ckgate/gateway"
)

// Multipart uploads. An upload's parts are hidden objects of its bucket,
// under multipartPrefix/<uploadId>/, written to the store directly (they
// are nobody's checkpoint until Complete): "upload" records the key and
// the principal that created it, "part-NNNNN" holds a part's bytes and
// "meta-NNNNN" its MD5, size and store version. Only the creating
// principal may upload to, complete, abort or list an upload. Complete
// streams the parts in order into one PutStream of the destination through
// the principal's guard, with the condition a PutObject would have (a log
// entry create-only), so a crash or an abort publishes nothing, and
// deletes the parts once the object is written. The object's ETag is the
// store's version, as for PutObject, so that HEAD, GET and If-Match agree
// with what Complete returned; a part's ETag is the MD5 of its bytes.
const multipartPrefix = "_ckgate/multipart/"

// minPartSize is S3's smallest part, but for the last.
const minPartSize = 5 << 20

const maxPartNumber = 10000

// reservedKey reports whether a key (inside its bucket) belongs to the
// front door: clients can neither read, write nor list it.
func reservedKey(key string) bool {
	return key == bucketMarker || strings.HasPrefix(key, multipartPrefix)
}

type uploadRecord struct {
	Key       string    `json:"key"`
	AccessKey string    `json:"access_key"`
	Initiated time.Time `json:"initiated"`
}

type partRecord struct {
	ETag    string          `json:"etag"` // hex MD5 of the part
	Size    int64           `json:"size"`
	Version gateway.Version `json:"version"`
	Time    time.Time       `json:"time"`
}

func uploadDir(bucket, id string) string { return objectKey(bucket, multipartPrefix+id+"/") }

func partKey(bucket, id string, n int32) string {
	return fmt.Sprintf("%spart-%05d", uploadDir(bucket, id), n)
}

func partMetaKey(bucket, id string, n int32) string {
	return fmt.Sprintf("%smeta-%05d", uploadDir(bucket, id), n)
}

func validUploadID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

var errNoSuchUpload = s3err.GetAPIError(s3err.ErrNoSuchUpload)

// principalOf is the principal that signed the request.
func (b *storeBackend) principalOf(ctx context.Context) (Principal, error) {
	acc, ok := ctx.Value(accountKey{}).(auth.Account)
	if !ok {
		return Principal{}, s3err.GetAPIError(s3err.ErrAccessDenied)
	}
	p, ok := b.creds.Lookup(acc.Access)
	if !ok {
		return Principal{}, s3err.GetAPIError(s3err.ErrAccessDenied)
	}
	return p, nil
}

func sortUploads(u []s3response.Upload) {
	sort.Slice(u, func(i, j int) bool {
		if u[i].Key != u[j].Key {
			return u[i].Key < u[j].Key
		}
		return u[i].UploadID < u[j].UploadID
	})
}

// upload reads the record of an upload and checks that the signer created
// it and that it is for key.
func (b *storeBackend) upload(ctx context.Context, bucket, key, id string) (uploadRecord, error) {
	var u uploadRecord
	if err := b.bucketExists(ctx, bucket); err != nil {
		return u, err
	}
	if !validUploadID(id) {
		return u, errNoSuchUpload
	}
	data, _, err := gateway.GetBounded(ctx, b.raw, uploadDir(bucket, id)+"upload", maxUploadRecord)
	if errors.Is(err, gateway.ErrNotFound) {
		return u, errNoSuchUpload
	}
	if err != nil {
		return u, s3Error(err)
	}
	if err := json.Unmarshal(data, &u); err != nil {
		return u, s3err.APIError{Code: "InternalError", Description: fmt.Sprintf("upload record %s: %v", uploadDir(bucket, id)+"upload", err), HTTPStatusCode: 500}
	}
	if key != "" && u.Key != key {
		return u, errNoSuchUpload
	}
	p, err := b.principalOf(ctx)
	if err != nil {
		return u, err
	}
	if p.AccessKey != u.AccessKey {
		return u, s3err.APIError{Code: "AccessDenied", Description: fmt.Sprintf("upload %s was created by another access key", id), HTTPStatusCode: 403}
	}
	return u, nil
}

func (b *storeBackend) CreateMultipartUpload(ctx context.Context, in s3response.CreateMultipartUploadInput) (s3response.InitiateMultipartUploadResult, error) {
	ctx = detach(ctx)
	if err := unkept(in.Tagging, in.ObjectLockMode, in.ObjectLockLegalHoldStatus, in.ObjectLockRetainUntilDate); err != nil {
		return s3response.InitiateMultipartUploadResult{}, err
	}
	bucket, key := str(in.Bucket), str(in.Key)
	if err := b.bucketExists(ctx, bucket); err != nil {
		return s3response.InitiateMultipartUploadResult{}, err
	}
	if reservedKey(key) {
		return s3response.InitiateMultipartUploadResult{}, reservedError(key)
	}
	p, err := b.principalOf(ctx)
	if err != nil {
		return s3response.InitiateMultipartUploadResult{}, err
	}
	id := randomHex(16)
	rec, _ := json.Marshal(uploadRecord{Key: key, AccessKey: p.AccessKey, Initiated: time.Now().UTC()})
	if _, err := b.raw.Put(ctx, uploadDir(bucket, id)+"upload", rec, gateway.IfAbsent()); err != nil {
		return s3response.InitiateMultipartUploadResult{}, s3Error(err)
	}
	return s3response.InitiateMultipartUploadResult{Bucket: bucket, Key: key, UploadId: id}, nil
}

func checkPartNumber(n *int32) (int32, error) {
	if n == nil || *n < 1 || *n > maxPartNumber {
		return 0, s3err.GetAPIError(s3err.ErrInvalidPartNumberRange)
	}
	return *n, nil
}

// putPart stores one part's bytes and then its record.
func (b *storeBackend) putPart(ctx context.Context, bucket, id string, n int32, r io.Reader) (partRecord, error) {
	h := md5.New()
	cr := &gateway.CountingReader{R: r, Hash: h}
	v, err := b.raw.PutStream(ctx, partKey(bucket, id, n), cr, gateway.None())
	if err != nil {
		return partRecord{}, s3Error(err)
	}
	pr := partRecord{ETag: hexSum(h), Size: cr.N, Version: v, Time: time.Now().UTC()}
	data, _ := json.Marshal(pr)
	if _, err := b.raw.Put(ctx, partMetaKey(bucket, id, n), data, gateway.None()); err != nil {
		return partRecord{}, s3Error(err)
	}
	return pr, nil
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

func (b *storeBackend) UploadPart(ctx context.Context, in *s3.UploadPartInput) (*s3.UploadPartOutput, error) {
	ctx = detach(ctx)
	bucket, key, id := str(in.Bucket), str(in.Key), str(in.UploadId)
	if err := b.bucketExists(ctx, bucket); err != nil {
		return nil, err // before the part number, as S3 answers
	}
	n, err := checkPartNumber(in.PartNumber)
	if err != nil {
		return nil, err
	}
	if _, err := b.upload(ctx, bucket, key, id); err != nil {
		return nil, err
	}
	body, err := checksummed(in.Body, headerSums(in.ChecksumCRC32, in.ChecksumCRC32C, in.ChecksumSHA1, in.ChecksumSHA256, in.ChecksumCRC64NVME,
		in.ChecksumSHA512, in.ChecksumMD5, in.ChecksumXXHASH64, in.ChecksumXXHASH3, in.ChecksumXXHASH128))
	if err != nil {
		return nil, s3err.GetAPIError(s3err.ErrInvalidRequest)
	}
	pr, err := b.putPart(ctx, bucket, id, n, body)
	if err != nil {
		return nil, err
	}
	e := `"` + pr.ETag + `"`
	return &s3.UploadPartOutput{ETag: &e}, nil
}

func (b *storeBackend) UploadPartCopy(ctx context.Context, in *s3.UploadPartCopyInput) (s3response.CopyPartResult, error) {
	ctx = detach(ctx)
	bucket, key, id := str(in.Bucket), str(in.Key), str(in.UploadId)
	if err := b.bucketExists(ctx, bucket); err != nil {
		return s3response.CopyPartResult{}, err // before the part number, as S3 answers
	}
	n, err := checkPartNumber(in.PartNumber)
	if err != nil {
		return s3response.CopyPartResult{}, err
	}
	if _, err := b.upload(ctx, bucket, key, id); err != nil {
		return s3response.CopyPartResult{}, err
	}
	srcBucket, srcKey, srcVersion, err := vbackend.ParseCopySource(str(in.CopySource))
	if err != nil {
		return s3response.CopyPartResult{}, err
	}
	if srcVersion != "" {
		return s3response.CopyPartResult{}, s3err.APIError{Code: "NotImplemented", Description: "copy of an object version", HTTPStatusCode: 501}
	}
	if err := b.bucketExists(ctx, srcBucket); err != nil {
		return s3response.CopyPartResult{}, err
	}
	if reservedKey(srcKey) {
		return s3response.CopyPartResult{}, s3err.GetAPIError(s3err.ErrNoSuchKey)
	}
	// A source range is one ranged read from its first byte, checked
	// against the size once the source is open.
	r := str(in.CopySourceRange)
	off, n0 := int64(0), int64(-1)
	if start, length, err := vbackend.ParseCopySourceRange(math.MaxInt64, r); err == nil && r != "" {
		off = start
		if !strings.HasSuffix(strings.TrimSpace(r), "-") {
			n0 = length
		}
	}
	rc, a, err := gateway.GetRange(ctx, b.raw, objectKey(srcBucket, srcKey), off, n0)
	if err != nil {
		return s3response.CopyPartResult{}, s3Error(err)
	}
	defer rc.Close()
	if err := readConds(a, in.CopySourceIfMatch, in.CopySourceIfNoneMatch, in.CopySourceIfModifiedSince, in.CopySourceIfUnmodifiedSince); err != nil {
		return s3response.CopyPartResult{}, err
	}
	var body io.Reader = rc
	if r != "" {
		start, length, err := vbackend.ParseCopySourceRange(a.Size, r)
		if err != nil {
			return s3response.CopyPartResult{}, err
		}
		if start != off {
			return s3response.CopyPartResult{}, s3Error(fmt.Errorf("copy source range %q of %s: starts at %d, read from %d", r, srcKey, start, off))
		}
		body = io.LimitReader(rc, length)
	}
	pr, err := b.putPart(ctx, bucket, id, n, body)
	if err != nil {
		return s3response.CopyPartResult{}, err
	}
	e := `"` + pr.ETag + `"`
	return s3response.CopyPartResult{ETag: &e, LastModified: pr.Time}, nil
}

// parts reads the records of an upload's parts, in part order.
func (b *storeBackend) parts(ctx context.Context, bucket, id string) ([]partAt, error) {
	var out []partAt
	dir := uploadDir(bucket, id)
	for a, err := range b.raw.List(ctx, dir+"meta-") {
		if err != nil {
			return nil, s3Error(err)
		}
		var n int32
		if _, err := fmt.Sscanf(strings.TrimPrefix(a.Key, dir), "meta-%05d", &n); err != nil {
			continue
		}
		data, _, err := b.raw.Get(ctx, a.Key)
		if errors.Is(err, gateway.ErrNotFound) {
			continue // aborted or completed meanwhile
		}
		if err != nil {
			return nil, s3Error(err)
		}
		var pr partRecord
		if err := json.Unmarshal(data, &pr); err != nil {
			return nil, s3err.APIError{Code: "InternalError", Description: fmt.Sprintf("part record %s: %v", a.Key, err), HTTPStatusCode: 500}
		}
		out = append(out, partAt{n, pr})
	}
	return out, nil
}

type partAt struct {
	n int32
	partRecord
}

func (b *storeBackend) ListParts(ctx context.Context, in *s3.ListPartsInput) (s3response.ListPartsResult, error) {
	ctx = detach(ctx)
	bucket, key, id := str(in.Bucket), str(in.Key), str(in.UploadId)
	out := s3response.ListPartsResult{Bucket: bucket, Key: key, UploadID: id, MaxParts: 1000}
	if _, err := b.upload(ctx, bucket, key, id); err != nil {
		return out, err
	}
	if in.MaxParts != nil && *in.MaxParts >= 0 && *in.MaxParts < 1000 {
		out.MaxParts = int(*in.MaxParts)
	}
	marker := 0
	if s := str(in.PartNumberMarker); s != "" {
		if _, err := fmt.Sscanf(s, "%d", &marker); err != nil || marker < 0 {
			return out, s3err.APIError{Code: "InvalidArgument", Description: "part-number-marker must be a number", HTTPStatusCode: 400}
		}
	}
	out.PartNumberMarker = marker
	ps, err := b.parts(ctx, bucket, id)
	if err != nil {
		return out, err
	}
	for _, p := range ps {
		if int(p.n) <= marker {
			continue
		}
		if len(out.Parts) == out.MaxParts {
			out.IsTruncated = true
			break
		}
		out.Parts = append(out.Parts, s3response.Part{PartNumber: int(p.n), ETag: `"` + p.ETag + `"`, Size: p.Size, LastModified: p.Time})
		out.NextPartNumberMarker = int(p.n)
	}
	return out, nil
}

func (b *storeBackend) ListMultipartUploads(ctx context.Context, in *s3.ListMultipartUploadsInput) (s3response.ListMultipartUploadsResult, error) {
	ctx = detach(ctx)
	bucket, prefix := str(in.Bucket), str(in.Prefix)
	out := s3response.ListMultipartUploadsResult{Bucket: bucket, Prefix: prefix, KeyMarker: str(in.KeyMarker), UploadIDMarker: str(in.UploadIdMarker), MaxUploads: 1000}
	if err := b.bucketExists(ctx, bucket); err != nil {
		return out, err
	}
	if in.MaxUploads != nil && *in.MaxUploads >= 0 && *in.MaxUploads < 1000 {
		out.MaxUploads = int(*in.MaxUploads)
	}
	p, err := b.principalOf(ctx)
	if err != nil {
		return out, err
	}
	var ups []s3response.Upload
	base := objectKey(bucket, multipartPrefix)
	for a, err := range b.raw.List(ctx, base) {
		if err != nil {
			return out, s3Error(err)
		}
		id, name, ok := strings.Cut(strings.TrimPrefix(a.Key, base), "/")
		if !ok || name != "upload" || !validUploadID(id) {
			continue
		}
		data, _, err := b.raw.Get(ctx, a.Key)
		if err != nil {
			continue // completed or aborted meanwhile
		}
		var u uploadRecord
		if json.Unmarshal(data, &u) != nil || u.AccessKey != p.AccessKey || !strings.HasPrefix(u.Key, prefix) {
			continue
		}
		if u.Key < out.KeyMarker || (u.Key == out.KeyMarker && (out.UploadIDMarker == "" || id <= out.UploadIDMarker)) {
			continue
		}
		ups = append(ups, s3response.Upload{Key: u.Key, UploadID: id, Initiated: u.Initiated})
	}
	sortUploads(ups)
	for _, u := range ups {
		if len(out.Uploads) == out.MaxUploads {
			out.IsTruncated = true
			break
		}
		out.Uploads = append(out.Uploads, u)
		out.NextKeyMarker, out.NextUploadIDMarker = u.Key, u.UploadID
	}
	return out, nil
}

func (b *storeBackend) AbortMultipartUpload(ctx context.Context, in *s3.AbortMultipartUploadInput) error {
	ctx = detach(ctx)
	bucket, key, id := str(in.Bucket), str(in.Key), str(in.UploadId)
	u, err := b.upload(ctx, bucket, key, id)
	if err != nil {
		return err
	}
	// x-amz-if-match-initiated-time: abort only the upload created then
	// (to the second, as ListMultipartUploads shows it).
	if t := in.IfMatchInitiatedTime; t != nil && !t.Truncate(time.Second).Equal(u.Initiated.Truncate(time.Second)) {
		return s3err.GetAPIError(s3err.ErrPreconditionFailed)
	}
	return b.dropUpload(ctx, bucket, id)
}

// dropUploads deletes every upload of bucket (DeleteBucket of a bucket
// holding nothing but pending uploads).
func (b *storeBackend) dropUploads(ctx context.Context, bucket string) error {
	for a, err := range b.raw.List(ctx, objectKey(bucket, multipartPrefix)) {
		if err != nil {
			return s3Error(err)
		}
		if err := b.raw.Delete(ctx, a.Key, gateway.None()); err != nil && !errors.Is(err, gateway.ErrNotFound) {
			return s3Error(err)
		}
	}
	return nil
}

// dropUpload deletes an upload's parts, then its record.
func (b *storeBackend) dropUpload(ctx context.Context, bucket, id string) error {
	dir := uploadDir(bucket, id)
	var keys []string
	for a, err := range b.raw.List(ctx, dir) {
		if err != nil {
			return s3Error(err)
		}
		if a.Key != dir+"upload" {
			keys = append(keys, a.Key)
		}
	}
	for _, k := range append(keys, dir+"upload") {
		if err := b.raw.Delete(ctx, k, gateway.None()); err != nil && !errors.Is(err, gateway.ErrNotFound) {
			return s3Error(err)
		}
	}
	return nil
}

func (b *storeBackend) CompleteMultipartUpload(ctx context.Context, in *s3.CompleteMultipartUploadInput) (s3response.CompleteMultipartUploadResult, string, error) {
	ctx = detach(ctx)
	var out s3response.CompleteMultipartUploadResult
	bucket, key, id := str(in.Bucket), str(in.Key), str(in.UploadId)
	if _, err := b.upload(ctx, bucket, key, id); err != nil {
		return out, "", err
	}
	if in.MultipartUpload == nil || len(in.MultipartUpload.Parts) == 0 {
		return out, "", s3err.GetAPIError(s3err.ErrMalformedXML)
	}
	have, err := b.parts(ctx, bucket, id)
	if err != nil {
		return out, "", err
	}
	byNum := map[int32]partRecord{}
	for _, p := range have {
		byNum[p.n] = p.partRecord
	}
	var chosen []partAt
	var total int64
	last := int32(0)
	for i, cp := range in.MultipartUpload.Parts {
		if cp.PartNumber == nil || cp.ETag == nil {
			return out, "", s3err.GetAPIError(s3err.ErrMalformedXML)
		}
		n := *cp.PartNumber
		if n < 1 || n > maxPartNumber {
			return out, "", s3err.APIError{Code: "InvalidArgument", Description: fmt.Sprintf("part number %d is not between 1 and %d", n, maxPartNumber), HTTPStatusCode: 400}
		}
		if n <= last {
			return out, "", s3err.GetAPIError(s3err.ErrInvalidPartOrder)
		}
		last = n
		pr, ok := byNum[n]
		if !ok || string(unquote(*cp.ETag)) != pr.ETag {
			return out, "", s3err.GetAPIError(s3err.ErrInvalidPart)
		}
		if i < len(in.MultipartUpload.Parts)-1 && pr.Size < minPartSize {
			return out, "", s3err.GetAPIError(s3err.ErrEntityTooSmall)
		}
		chosen = append(chosen, partAt{n, pr})
		total += pr.Size
	}
	if in.MpuObjectSize != nil && *in.MpuObjectSize != total {
		return out, "", s3err.GetIncorrectMpObjectSizeErr(*in.MpuObjectSize, total)
	}
	cond, err := putCond(key, in.IfMatch, in.IfNoneMatch)
	if err != nil {
		return out, "", err
	}
	w, err := b.writer(ctx)
	if err != nil {
		return out, "", err
	}
	r := &partsReader{ctx: ctx, raw: b.raw, bucket: bucket, id: id, parts: chosen}
	v, err := w.PutStream(ctx, objectKey(bucket, key), r, cond)
	r.close()
	if err != nil {
		return out, "", s3Error(err)
	}
	b.committed(ctx, bucket, key)
	// The object is written; a failure to remove the parts leaves hidden
	// garbage that ListMultipartUploads shows and an abort removes.
	_ = b.dropUpload(ctx, bucket, id)
	out.Bucket, out.Key, out.ETag = &bucket, &key, etag(v)
	return out, "", nil
}

// partsReader reads the chosen parts one after the other, each checked to
// be the version its record names (a part re-uploaded meanwhile fails the
// Complete rather than mixing uploads).
type partsReader struct {
	ctx    context.Context
	raw    gateway.Store
	bucket string
	id     string
	parts  []partAt
	cur    io.ReadCloser
}

func (r *partsReader) Read(p []byte) (int, error) {
	for {
		if r.cur == nil {
			if len(r.parts) == 0 {
				return 0, io.EOF
			}
			next := r.parts[0]
			r.parts = r.parts[1:]
			k := partKey(r.bucket, r.id, next.n)
			rc, a, err := r.raw.GetStream(r.ctx, k)
			if err != nil {
				return 0, fmt.Errorf("part %d of upload %s: %w", next.n, r.id, err)
			}
			if a.Version != next.Version || a.Size != next.Size {
				rc.Close()
				return 0, s3err.GetAPIError(s3err.ErrInvalidPart)
			}
			r.cur = rc
		}
		n, err := r.cur.Read(p)
		if err == io.EOF {
			r.cur.Close()
			r.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (r *partsReader) close() {
	if r.cur != nil {
		r.cur.Close()
		r.cur = nil
	}
}

func reservedError(key string) error {
	return s3err.APIError{Code: "AccessDenied", Description: fmt.Sprintf("%s is reserved for ckgate serve's own records", key), HTTPStatusCode: 403}
}

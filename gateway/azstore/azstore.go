package azstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"iter"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/ckgate/ckgate/gateway"
)

const (
	// BlockSize is the size of the blocks PutStream stages; a stream
	// shorter than one block is sent as a single Put Blob.
	BlockSize = 8 << 20
	// maxBlocks is Azure's limit of committed blocks per blob.
	maxBlocks = 50000
	// maxNameLen is Azure's limit on a blob name, in characters.
	maxNameLen = 1024
	// listPageSize is the page size of List (the service's maximum).
	listPageSize = 5000
	// metaWriteID names the metadata entry holding a write's id.
	metaWriteID = "ckgatewriteid"
)

// Store is a gateway.Store on one Azure Blob container, optionally under
// a prefix: the portable gateway.Bucket over the Azure driver. Create it
// with Open or New; it is safe for concurrent use.
type Store struct {
	*gateway.Bucket
	d *driver
}

// driver holds what the Azure operations need; gateway.Bucket does the
// rest.
type driver struct {
	client *container.Client
	auth   string // the credential method, for diagnostics

	blockSize int   // PutStream block size
	pageSize  int32 // List page size
}

// Store is a gateway.Store (and, through its Bucket, a BucketMaker and a
// Closer) over driver.
var (
	_ gateway.Store  = (*Store)(nil)
	_ gateway.Driver = (*driver)(nil)
)

// New returns a Store on the container of client, keeping every key under
// prefix (a relative key prefix such as "team/query-1"; "" for none). Build
// client with ClientOptions so that retried conditional writes are
// resolved (see the package documentation).
func New(client *container.Client, prefix string) *Store {
	d := &driver{client: client, auth: "client", blockSize: BlockSize, pageSize: listPageSize}
	return &Store{Bucket: gateway.NewBucket(d, prefix), d: d}
}

// Client returns the container client the store uses.
func (s *Store) Client() *container.Client { return s.d.client }

// Auth names the credential method the store was opened with:
// "connection-string", "key", "sas", "identity", "anonymous", or "client"
// for a store made by New.
func (s *Store) Auth() string { return s.d.auth }

// Kind classifies an SDK, network or credential error.
func (s *driver) Kind(err error, _ gateway.Cond) error { return kindOf(err) }

// CheckName refuses blob names longer than Azure takes.
func (s *driver) CheckName(name string) error {
	if utf8.RuneCountInString(name) > maxNameLen {
		return errors.New("blob name (prefix and key) longer than 1024 characters")
	}
	return nil
}

// MakeBucket creates the container; an existing one is success.
func (s *driver) MakeBucket(ctx context.Context) error {
	_, err := s.client.Create(ctx, nil)
	if err == nil || bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		return nil
	}
	return e("make-bucket", containerName(s.client), err)
}

func containerName(c *container.Client) string {
	u := c.URL()
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	u = strings.TrimRight(u, "/")
	return u[strings.LastIndexByte(u, '/')+1:]
}

func (s *driver) blob(name string) *blockblob.Client { return s.client.NewBlockBlobClient(name) }

// version turns an ETag into a Version: the ETag without its quotes, so
// that listings (which may omit them) and headers agree.
func version(etag *azcore.ETag) gateway.Version {
	if etag == nil {
		return ""
	}
	return gateway.Version(strings.Trim(string(*etag), `"`))
}

// etagOf turns a Version back into the quoted ETag the service compares.
func etagOf(v gateway.Version) *azcore.ETag {
	et := azcore.ETag(`"` + strings.Trim(string(v), `"`) + `"`)
	return &et
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (s *driver) Get(ctx context.Context, key string) ([]byte, gateway.Version, error) {
	rc, a, err := s.getStream(ctx, "get", key)
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	buf := bytes.NewBuffer(make([]byte, 0, max(a.Size, 0)))
	if _, err := io.Copy(buf, rc); err != nil {
		return nil, "", e("get", key, err)
	}
	return buf.Bytes(), a.Version, nil
}

func (s *driver) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	return s.getStream(ctx, "get", key)
}

func (s *driver) getStream(ctx context.Context, op, key string) (io.ReadCloser, gateway.Attrs, error) {
	resp, err := s.blob(key).DownloadStream(ctx, nil)
	if err != nil {
		return nil, gateway.Attrs{}, e(op, key, err)
	}
	a := gateway.Attrs{
		Key:      key,
		Size:     deref(resp.ContentLength),
		Version:  version(resp.ETag),
		Modified: deref(resp.LastModified),
	}
	// The retry reader resumes a broken download with If-Match on the
	// ETag, so a read never mixes two versions.
	body := resp.NewRetryReader(ctx, &blob.RetryReaderOptions{MaxRetries: 3})
	return &reader{rc: body, op: op, key: key}, a, nil
}

// reader maps read errors of a download to gateway errors.
type reader struct {
	rc      io.ReadCloser
	op, key string
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	if err != nil && err != io.EOF {
		err = e(r.op, r.key, err)
	}
	return n, err
}

func (r *reader) Close() error { return r.rc.Close() }

func (s *driver) Stat(ctx context.Context, key string) (gateway.Attrs, error) {
	p, err := s.blob(key).GetProperties(ctx, nil)
	if err != nil {
		return gateway.Attrs{}, e("stat", key, err)
	}
	return gateway.Attrs{
		Key:      key,
		Size:     deref(p.ContentLength),
		Version:  version(p.ETag),
		Modified: deref(p.LastModified),
	}, nil
}

// List yields the keys under prefix in byte order. The service lists in
// UTF-16 order (Azure and Azurite alike), which differs from byte (UTF-8)
// order only between names that hold a character at or above U+D800 (an
// emoji against a full-width letter, say); List sorts each run of such
// consecutive names before yielding it, so plain names stream unbuffered.
func (s *driver) List(ctx context.Context, prefix string) iter.Seq2[gateway.Attrs, error] {
	return func(yield func(gateway.Attrs, error) bool) {
		full := prefix
		opts := &container.ListBlobsFlatOptions{MaxResults: to.Ptr(s.pageSize)}
		if full != "" {
			opts.Prefix = &full
		}
		var run []gateway.Attrs // consecutive names whose orders may differ
		flush := func() bool {
			slices.SortFunc(run, func(a, b gateway.Attrs) int { return strings.Compare(a.Key, b.Key) })
			for _, a := range run {
				if !yield(a, nil) {
					return false
				}
			}
			run = run[:0]
			return true
		}
		pager := s.client.NewListBlobsFlatPager(opts)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				yield(gateway.Attrs{}, e("list", prefix, err))
				return
			}
			for _, it := range page.Segment.BlobItems {
				name := deref(it.Name)
				if !strings.HasPrefix(name, full) {
					continue // never happens with a correct service
				}
				a := gateway.Attrs{Key: name}
				if p := it.Properties; p != nil {
					a.Size = deref(p.ContentLength)
					a.Version = version(p.ETag)
					a.Modified = deref(p.LastModified)
				}
				if utf16Differs(name[len(full):]) {
					run = append(run, a)
					continue
				}
				if !flush() || !yield(a, nil) {
					return
				}
			}
		}
		flush()
	}
}

// utf16Differs reports whether s holds a character whose UTF-16 order
// differs from its UTF-8 order against some other character: a
// supplementary one (surrogates D800-DBFF) or one in U+E000-U+FFFF. Names
// without such characters order alike in UTF-16 and UTF-8, against each
// other and against any name.
func utf16Differs(s string) bool {
	for _, r := range s {
		if r >= 0xD800 {
			return true
		}
	}
	return false
}

func (s *driver) Put(ctx context.Context, key string, data []byte, c gateway.Cond) (gateway.Version, error) {
	return s.upload(ctx, key, key, data, c)
}

// upload writes data as one Put Blob under condition c.
func (s *driver) upload(ctx context.Context, key, name string, data []byte, c gateway.Cond) (gateway.Version, error) {
	id := newWriteID()
	sum := md5.Sum(data)
	tctx, t := withTries(ctx)
	resp, err := s.blob(name).Upload(tctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{
		Metadata:                map[string]*string{metaWriteID: &id},
		HTTPHeaders:             &blob.HTTPHeaders{BlobContentMD5: sum[:]},
		TransactionalValidation: blob.TransferValidationTypeMD5(sum[:]),
		AccessConditions:        accessConditions(c),
	})
	if err == nil {
		return version(resp.ETag), nil
	}
	v, absent, err := s.writeFailed(ctx, key, name, c, id, t, err)
	if absent {
		// Refused as existing, yet no blob is there: Azurite counts a
		// name holding only uncommitted blocks (a failed or running
		// PutStream) as existing for Put Blob, though not for Put Block
		// List; Azure may also answer so when the blob was deleted
		// since. The key is free: create it through a block commit, which
		// is as atomic.
		return s.commit(ctx, key, name, [][]byte{data}, c, false)
	}
	return v, err
}

func accessConditions(c gateway.Cond) *blob.AccessConditions {
	switch c.Kind {
	case gateway.CondIfAbsent:
		return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}
	case gateway.CondIfMatch:
		return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: etagOf(c.Version)}}
	}
	return nil
}

// writeFailed maps the error of a write of id under c. A refused
// condition is checked by reading the blob: when the pipeline retried the
// request, the first attempt may have been applied and the retry refused
// because of it, and the blob then carries id. absent reports an IfAbsent
// refusal although no blob exists.
func (s *driver) writeFailed(ctx context.Context, key, name string, c gateway.Cond, id string, t *tries, err error) (v gateway.Version, absent bool, _ error) {
	if condKind(c, err) == nil {
		return "", false, e("put", key, err)
	}
	var perr error
	r := gateway.Refused{Op: "put", Key: key, Cond: c, Err: cause(err), Retried: t.retried()}
	v, err = r.Settle(ctx, func(ctx context.Context) (gateway.Version, bool, error) {
		p, err := s.blob(name).GetProperties(ctx, nil)
		if err != nil {
			perr = err
			return "", false, cause(err)
		}
		return version(p.ETag), metaValue(p.Metadata, metaWriteID) == id, nil
	}, blobMissing)
	absent = err != nil && perr != nil && c.Kind == gateway.CondIfAbsent && blobMissing(perr)
	return v, absent, err
}

// blobMissing reports whether err says the blob (not its container) does
// not exist.
func blobMissing(err error) bool {
	status, code := statusOf(err)
	return code == string(bloberror.BlobNotFound) ||
		(status == http.StatusNotFound && code != string(bloberror.ContainerNotFound) && kindOf(err) == gateway.ErrNotFound)
}

// condKind returns the kind of err when it is the refusal of condition c
// (ErrExists for IfAbsent, ErrPrecondition for IfMatch), or nil.
func condKind(c gateway.Cond, err error) error {
	status, code := statusOf(err)
	switch c.Kind {
	case gateway.CondIfAbsent:
		// Azurite answers 409 BlobAlreadyExists, Azure may answer 412.
		if code == string(bloberror.BlobAlreadyExists) || status == http.StatusPreconditionFailed {
			return gateway.ErrExists
		}
	case gateway.CondIfMatch:
		if status == http.StatusPreconditionFailed || code == string(bloberror.BlobNotFound) {
			return gateway.ErrPrecondition
		}
	}
	return nil
}

// metaValue looks name up in blob metadata; the SDK may change the case
// of the keys it reads from headers.
func metaValue(md map[string]*string, name string) string {
	for k, v := range md {
		if strings.EqualFold(k, name) {
			return deref(v)
		}
	}
	return ""
}

func newWriteID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

func (s *driver) Delete(ctx context.Context, key string, c gateway.Cond) error {
	name := key
	opts := &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}
	if c.Kind == gateway.CondIfMatch {
		opts.AccessConditions = accessConditions(c)
	}
	ctx, t := withTries(ctx)
	_, err := s.blob(name).Delete(ctx, opts)
	if err == nil {
		return nil
	}
	kind := kindOf(err)
	switch {
	case kind == gateway.ErrNotFound && t.retried() && bloberror.HasCode(err, bloberror.BlobNotFound):
		// An earlier attempt deleted it.
		return nil
	case kind == gateway.ErrPrecondition && c.Kind == gateway.CondIfMatch:
		// A missing blob is not found, whatever the condition says.
		if _, perr := s.blob(name).GetProperties(ctx, nil); blobMissing(perr) {
			return gateway.E("delete", key, gateway.ErrNotFound, cause(err))
		}
	}
	return gateway.E("delete", key, kind, cause(err))
}

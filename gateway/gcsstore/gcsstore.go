package gcsstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"iter"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/ckgate/ckgate/gateway"
)

// WriteIDKey is the object metadata key under which every write stores its
// random write id (sent as x-goog-meta-ckgate-write-id). It lets a retried
// conditional write recognise its own first attempt.
const WriteIDKey = "ckgate-write-id"

const (
	// DefaultChunkSize is the resumable-upload chunk size of PutStream and
	// of large Puts: the Writer buffers one chunk to be able to retry it.
	DefaultChunkSize = 8 << 20
	// maxObjectName is GCS's limit on object names, in bytes.
	maxObjectName = 1024
	// listPageSize is the number of names a list request asks for (GCS's
	// default and maximum).
	listPageSize = 1000
	// uploadQuantum is the granularity of upload chunk sizes.
	uploadQuantum = 256 << 10
)

var crc32cTable = crc32.MakeTable(crc32.Castagnoli)

// Store is a gateway.Store on one GCS bucket, optionally under a prefix:
// the portable gateway.Bucket over the GCS driver. It is safe for
// concurrent use.
type Store struct {
	*gateway.Bucket
	d *driver
}

// driver holds what the GCS operations need; gateway.Bucket does the rest.
type driver struct {
	client    *storage.Client
	bucket    *storage.BucketHandle
	name      string // bucket name
	project   string
	chunkSize int
	attempts  int  // 0: the library's default (retry until ctx ends)
	owned     bool // Close closes client
	// condCopy: the service evaluates a rewrite's conditions (Cloud
	// Storage, not an emulator; see Copy).
	condCopy bool
}

// Store is a gateway.Store (and, through its Bucket, a BucketMaker and a
// Closer) over driver.
var (
	_ gateway.Store  = (*Store)(nil)
	_ gateway.Driver = (*driver)(nil)
)

// Option configures a Store made by New.
type Option func(*driver)

// WithProject sets the project MakeBucket creates the bucket in.
func WithProject(id string) Option { return func(d *driver) { d.project = id } }

// WithChunkSize sets the resumable-upload chunk size (rounded up to a
// multiple of 256 KiB; default DefaultChunkSize). Each upload in flight
// buffers one chunk.
func WithChunkSize(n int) Option {
	return func(d *driver) {
		if n > 0 {
			d.chunkSize = roundUp(n)
		}
	}
}

// WithMaxAttempts bounds how many times one request is tried (the first
// attempt included) on retryable failures (408, 429, 5xx, resets). The
// library's default, kept when n <= 0, retries until the context ends.
func WithMaxAttempts(n int) Option { return func(d *driver) { d.attempts = max(n, 0) } }

// New returns a Store on bucket through client, keeping every key under
// prefix (leading and trailing '/' are ignored). The caller keeps ownership
// of client: Close does not close it.
func New(client *storage.Client, bucket, prefix string, opts ...Option) *Store {
	d := &driver{
		client:    client,
		bucket:    client.Bucket(bucket),
		name:      bucket,
		chunkSize: DefaultChunkSize,
		condCopy:  os.Getenv(EmulatorHostEnv) == "",
	}
	for _, o := range opts {
		o(d)
	}
	if d.attempts > 0 {
		d.bucket = d.bucket.Retryer(storage.WithMaxAttempts(d.attempts))
	}
	return &Store{Bucket: gateway.NewBucket(d, prefix), d: d}
}

// BucketName returns the bucket name.
func (s *Store) BucketName() string { return s.d.name }

// Client returns the storage client.
func (s *Store) Client() *storage.Client { return s.d.client }

// Close closes the client when the Store opened it (Open); a Store made
// with New leaves its client to the caller. Either way the store is done:
// later calls fail with gateway.ErrClosed.
func (d *driver) Close() error {
	if d.owned {
		return d.client.Close()
	}
	return nil
}

// CheckName refuses the object names GCS does not take.
func (d *driver) CheckName(name string) error {
	switch {
	case len(name) > maxObjectName:
		return fmt.Errorf("object name %d bytes long with the store prefix; GCS allows %d", len(name), maxObjectName)
	case strings.ContainsAny(name, "\r\n"):
		return errors.New("GCS object names cannot contain CR or LF")
	case strings.HasPrefix(name, ".well-known/acme-challenge/"):
		return errors.New("GCS refuses names under .well-known/acme-challenge/")
	}
	return nil
}

// Kind classifies a library error for a request that carried c.
func (d *driver) Kind(err error, c gateway.Cond) error { return kindOf(c, err) }

// retries records whether the library retried a request, and bounds
// upload retries (the library's own bound does not cover uploads).
type retries struct {
	max     int32
	retried atomic.Bool
	failed  atomic.Int32
}

// track makes h report its retries to r. h's retry settings are private to
// it: each Store call gets its own handle.
func (d *driver) track(h *storage.ObjectHandle) (*storage.ObjectHandle, *retries) {
	r := &retries{max: int32(d.attempts)}
	return h.Retryer(storage.WithErrorFunc(func(err error) bool {
		if !storage.ShouldRetry(err) {
			return false
		}
		if n := r.failed.Add(1); r.max > 0 && n >= r.max {
			return false
		}
		r.retried.Store(true)
		return true
	})), r
}

func version(gen int64) gateway.Version { return gateway.Version(strconv.FormatInt(gen, 10)) }

// generation parses v; ok is false for a version that is no generation
// (and so matches no object).
func generation(v gateway.Version) (int64, bool) {
	g, err := strconv.ParseInt(string(v), 10, 64)
	return g, err == nil && g > 0
}

// Get returns the whole object and its generation.
func (d *driver) Get(ctx context.Context, name string) ([]byte, gateway.Version, error) {
	r, err := d.bucket.Object(name).NewReader(ctx)
	if err != nil {
		return nil, "", named(ctx, err)
	}
	defer r.Close()
	buf := bytes.NewBuffer(make([]byte, 0, max(r.Attrs.Size, 0)+bytes.MinRead))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, "", named(ctx, err)
	}
	return buf.Bytes(), version(r.Attrs.Generation), nil
}

// GetStream opens the object for reading.
func (d *driver) GetStream(ctx context.Context, name string) (io.ReadCloser, gateway.Attrs, error) {
	r, err := d.bucket.Object(name).NewReader(ctx)
	if err != nil {
		return nil, gateway.Attrs{}, named(ctx, err)
	}
	a := gateway.Attrs{Size: r.Attrs.Size, Version: version(r.Attrs.Generation), Modified: r.Attrs.LastModified}
	return &reader{ctx: ctx, r: r}, a, nil
}

// reader names a cancelled context in its read errors.
type reader struct {
	ctx context.Context
	r   *storage.Reader
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = named(r.ctx, err)
	}
	return n, err
}

func (r *reader) Close() error { return r.r.Close() }

// Stat returns the object's attributes.
func (d *driver) Stat(ctx context.Context, name string) (gateway.Attrs, error) {
	a, err := d.bucket.Object(name).Attrs(ctx)
	if err != nil {
		return gateway.Attrs{}, named(ctx, err)
	}
	return gateway.Attrs{Size: a.Size, Version: version(a.Generation), Modified: a.Updated}, nil
}

// List yields the names under prefix in lexical order; the object
// iterator pages (1,000 names a page). Directory placeholder objects (names
// ending in '/', as the Cloud console and some connectors create) are no
// keys and are skipped.
func (d *driver) List(ctx context.Context, prefix string) iter.Seq2[gateway.Attrs, error] {
	return func(yield func(gateway.Attrs, error) bool) {
		q := &storage.Query{Prefix: prefix}
		if err := q.SetAttrSelection([]string{"Name", "Size", "Generation", "Updated"}); err != nil {
			yield(gateway.Attrs{}, gateway.E("list", prefix, gateway.ErrUnsupported, err))
			return
		}
		it := d.bucket.Objects(ctx, q)
		// Ask for GCS's own page size explicitly: an emulator that
		// defaults to one unbounded page then pages too.
		it.PageInfo().MaxSize = listPageSize
		for {
			a, err := it.Next()
			if err == iterator.Done {
				return
			}
			if err != nil {
				yield(gateway.Attrs{}, named(ctx, err))
				return
			}
			if a.Name == "" || strings.HasSuffix(a.Name, "/") {
				continue
			}
			if !yield(gateway.Attrs{Key: a.Name, Size: a.Size, Version: version(a.Generation), Modified: a.Updated}, nil) {
				return
			}
		}
	}
}

// Put stores data under name subject to c. Small objects go in one
// request; objects larger than the chunk size as a resumable upload.
func (d *driver) Put(ctx context.Context, name string, data []byte, c gateway.Cond) (gateway.Version, error) {
	chunk := min(roundUp(len(data)+1), d.chunkSize)
	crc := crc32.Checksum(data, crc32cTable)
	return d.write(ctx, name, c, bytes.NewReader(data), chunk, &crc)
}

// PutStream stores what r yields under name subject to c, as a resumable
// upload in chunks of the configured size (one chunk buffered). Cancelling
// ctx, or r failing, aborts the upload: no object is created.
func (d *driver) PutStream(ctx context.Context, name string, r io.Reader, c gateway.Cond) (gateway.Version, error) {
	return d.write(ctx, name, c, r, d.chunkSize, nil)
}

// write uploads r to obj under condition c. crc is the CRC32C of the data
// when known in advance (it is then sent for the service to verify).
func (d *driver) write(ctx context.Context, name string, c gateway.Cond, r io.Reader, chunk int, crc *uint32) (gateway.Version, error) {
	obj := d.bucket.Object(name)
	target, err := d.conditioned(obj, "put", name, c)
	if err != nil {
		return "", err
	}
	if c.Kind == gateway.CondNone {
		// An unconditional write of the same bytes is safe to repeat.
		target = target.Retryer(storage.WithPolicy(storage.RetryAlways))
	}
	target, tries := d.track(target)

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	id := rand.Text()
	w := target.NewWriter(wctx)
	w.ChunkSize = chunk
	w.ContentType = "application/octet-stream"
	w.Metadata = map[string]string{WriteIDKey: id}
	if crc != nil {
		w.CRC32C = *crc
		w.SendCRC32C = true
	}
	src := &countingReader{r: r, h: crc32.New(crc32cTable)}
	_, copyErr := io.Copy(w, src)
	if src.err != nil {
		cancel() // abort the upload: nothing is finalised
		_ = w.Close()
		return "", gateway.E("put", name, gateway.ErrUnavailable, fmt.Errorf("reading the data to upload: %w", src.err))
	}
	err = w.Close()
	if err == nil && copyErr != nil {
		err = copyErr
	}
	if err == nil {
		if a := w.Attrs(); a != nil {
			return version(a.Generation), nil
		}
		return "", gateway.E("put", name, gateway.ErrUnavailable, errors.New("upload finished without object metadata"))
	}
	if isPrecondition(err) && c.Kind != gateway.CondNone {
		// An earlier attempt (the library's retry) or an earlier delivery
		// of this very request (a replay on the way) may have landed: look
		// for this write's id.
		r := gateway.Refused{Op: "put", Key: name, Cond: c, Err: err, Retried: tries.retried.Load()}
		return r.Settle(ctx, func(ctx context.Context) (gateway.Version, bool, error) {
			a, err := obj.Attrs(ctx)
			if err != nil {
				return "", false, err
			}
			return version(a.Generation), a.Metadata[WriteIDKey] == id && a.Size == src.n && a.CRC32C == src.sum(), nil
		}, isNotFound)
	}
	return "", named(ctx, err)
}

// countingReader counts, hashes (CRC32C) and remembers the error of the
// caller's reader, so a failing source is told apart from a failing upload.
type countingReader struct {
	r   io.Reader
	h   hash.Hash32
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.h.Write(p[:n])
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

func (c *countingReader) sum() uint32 { return c.h.Sum32() }

// Delete removes name; with IfMatch only while its generation is the
// given one (ifGenerationMatch, checked by the service).
func (d *driver) Delete(ctx context.Context, name string, c gateway.Cond) error {
	obj := d.bucket.Object(name)
	if c.Kind == gateway.CondIfMatch {
		gen, ok := generation(c.Version)
		if !ok {
			return gateway.E("delete", name, gateway.ErrPrecondition, fmt.Errorf("version %q is no GCS generation", c.Version))
		}
		obj = obj.If(storage.Conditions{GenerationMatch: gen})
	}
	obj, tries := d.track(obj)
	err := obj.Delete(ctx)
	if err == nil {
		return nil
	}
	if c.Kind == gateway.CondIfMatch && tries.retried.Load() && isNotFound(err) {
		return nil // an earlier attempt of this call removed it
	}
	return named(ctx, err)
}

// roundUp returns n rounded up to the upload quantum (256 KiB).
func roundUp(n int) int {
	if n <= 0 {
		return uploadQuantum
	}
	return (n + uploadQuantum - 1) / uploadQuantum * uploadQuantum
}

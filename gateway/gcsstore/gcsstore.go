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
	"strconv"
	"strings"
	"sync"
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

// Store is a gateway.Store on one GCS bucket, optionally under a prefix.
// It is safe for concurrent use.
type Store struct {
	client    *storage.Client
	bucket    *storage.BucketHandle
	name      string // bucket name
	prefix    string // "" or "some/prefix/"
	project   string
	chunkSize int
	attempts  int  // 0: the library's default (retry until ctx ends)
	owned     bool // Close closes client
	closeOnce sync.Once
	closeErr  error
}

var (
	_ gateway.Store       = (*Store)(nil)
	_ gateway.BucketMaker = (*Store)(nil)
	_ gateway.Closer      = (*Store)(nil)
)

// Option configures a Store made by New.
type Option func(*Store)

// WithProject sets the project MakeBucket creates the bucket in.
func WithProject(id string) Option { return func(s *Store) { s.project = id } }

// WithChunkSize sets the resumable-upload chunk size (rounded up to a
// multiple of 256 KiB; default DefaultChunkSize). Each upload in flight
// buffers one chunk.
func WithChunkSize(n int) Option {
	return func(s *Store) {
		if n > 0 {
			s.chunkSize = roundUp(n)
		}
	}
}

// WithMaxAttempts bounds how many times one request is tried (the first
// attempt included) on retryable failures (408, 429, 5xx, resets). The
// library's default, kept when n <= 0, retries until the context ends.
func WithMaxAttempts(n int) Option { return func(s *Store) { s.attempts = max(n, 0) } }

// New returns a Store on bucket through client, keeping every key under
// prefix (leading and trailing '/' are ignored). The caller keeps ownership
// of client: Close does not close it.
func New(client *storage.Client, bucket, prefix string, opts ...Option) *Store {
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	s := &Store{
		client:    client,
		bucket:    client.Bucket(bucket),
		name:      bucket,
		prefix:    prefix,
		chunkSize: DefaultChunkSize,
	}
	for _, o := range opts {
		o(s)
	}
	if s.attempts > 0 {
		s.bucket = s.bucket.Retryer(storage.WithMaxAttempts(s.attempts))
	}
	return s
}

// Bucket returns the bucket name.
func (s *Store) Bucket() string { return s.name }

// Prefix returns the key prefix inside the bucket ("" or ending in '/').
func (s *Store) Prefix() string { return s.prefix }

// Client returns the storage client.
func (s *Store) Client() *storage.Client { return s.client }

// Close closes the client when the Store opened it (Open); a Store made
// with New leaves its client to the caller.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.owned {
			s.closeErr = s.client.Close()
		}
	})
	return s.closeErr
}

// object validates key and returns the handle of its object.
func (s *Store) object(op, key string) (*storage.ObjectHandle, error) {
	if err := gateway.ValidateKey(op, key); err != nil {
		return nil, err
	}
	name := s.prefix + key
	switch {
	case len(name) > maxObjectName:
		return nil, gateway.E(op, key, gateway.ErrInvalidKey,
			fmt.Errorf("object name %d bytes long with the store prefix; GCS allows %d", len(name), maxObjectName))
	case strings.ContainsAny(key, "\r\n"):
		return nil, gateway.E(op, key, gateway.ErrInvalidKey, errors.New("GCS object names cannot contain CR or LF"))
	case strings.HasPrefix(name, ".well-known/acme-challenge/"):
		return nil, gateway.E(op, key, gateway.ErrInvalidKey, errors.New("GCS refuses names under .well-known/acme-challenge/"))
	}
	return s.bucket.Object(name), nil
}

// retries records whether the library retried a request, and bounds
// upload retries (the library's own bound does not cover uploads).
type retries struct {
	max     int32
	retried atomic.Bool
	failed  atomic.Int32
}

// track makes h report its retries to r. h's retry settings are private to
// it: each Store call gets its own handle.
func (s *Store) track(h *storage.ObjectHandle) (*storage.ObjectHandle, *retries) {
	r := &retries{max: int32(s.attempts)}
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

func ctxErr(ctx context.Context, op, key string) error {
	if err := ctx.Err(); err != nil {
		return gateway.E(op, key, gateway.ErrUnavailable, err)
	}
	return nil
}

func version(gen int64) gateway.Version { return gateway.Version(strconv.FormatInt(gen, 10)) }

// generation parses v; ok is false for a version that is no generation
// (and so matches no object).
func generation(v gateway.Version) (int64, bool) {
	g, err := strconv.ParseInt(string(v), 10, 64)
	return g, err == nil && g > 0
}

// Get returns the whole object and its generation.
func (s *Store) Get(ctx context.Context, key string) ([]byte, gateway.Version, error) {
	obj, err := s.object("get", key)
	if err != nil {
		return nil, "", err
	}
	if err := ctxErr(ctx, "get", key); err != nil {
		return nil, "", err
	}
	r, err := obj.NewReader(ctx)
	if err != nil {
		return nil, "", wrap(ctx, "get", key, gateway.None(), err)
	}
	defer r.Close()
	buf := bytes.NewBuffer(make([]byte, 0, max(r.Attrs.Size, 0)+bytes.MinRead))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, "", wrap(ctx, "get", key, gateway.None(), err)
	}
	return buf.Bytes(), version(r.Attrs.Generation), nil
}

// GetStream opens the object for reading. Errors while reading are
// *gateway.Error values too.
func (s *Store) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	obj, err := s.object("get", key)
	if err != nil {
		return nil, gateway.Attrs{}, err
	}
	if err := ctxErr(ctx, "get", key); err != nil {
		return nil, gateway.Attrs{}, err
	}
	r, err := obj.NewReader(ctx)
	if err != nil {
		return nil, gateway.Attrs{}, wrap(ctx, "get", key, gateway.None(), err)
	}
	a := gateway.Attrs{Key: key, Size: r.Attrs.Size, Version: version(r.Attrs.Generation), Modified: r.Attrs.LastModified}
	return &reader{ctx: ctx, r: r, key: key}, a, nil
}

type reader struct {
	ctx context.Context
	r   *storage.Reader
	key string
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = wrap(r.ctx, "get", r.key, gateway.None(), err)
	}
	return n, err
}

func (r *reader) Close() error { return r.r.Close() }

// Stat returns the object's attributes.
func (s *Store) Stat(ctx context.Context, key string) (gateway.Attrs, error) {
	obj, err := s.object("stat", key)
	if err != nil {
		return gateway.Attrs{}, err
	}
	if err := ctxErr(ctx, "stat", key); err != nil {
		return gateway.Attrs{}, err
	}
	a, err := obj.Attrs(ctx)
	if err != nil {
		return gateway.Attrs{}, wrap(ctx, "stat", key, gateway.None(), err)
	}
	return gateway.Attrs{Key: key, Size: a.Size, Version: version(a.Generation), Modified: a.Updated}, nil
}

// List yields the keys under prefix in lexical order; the object iterator
// pages (1,000 names a page). Directory placeholder objects (names ending
// in '/', as the Cloud console and some connectors create) are no keys and
// are skipped.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[gateway.Attrs, error] {
	return func(yield func(gateway.Attrs, error) bool) {
		if err := gateway.ValidatePrefix(prefix); err != nil {
			yield(gateway.Attrs{}, err)
			return
		}
		if err := ctxErr(ctx, "list", prefix); err != nil {
			yield(gateway.Attrs{}, err)
			return
		}
		q := &storage.Query{Prefix: s.prefix + prefix}
		if err := q.SetAttrSelection([]string{"Name", "Size", "Generation", "Updated"}); err != nil {
			yield(gateway.Attrs{}, gateway.E("list", prefix, gateway.ErrUnsupported, err))
			return
		}
		it := s.bucket.Objects(ctx, q)
		// Ask for GCS's own page size explicitly: an emulator that
		// defaults to one unbounded page then pages too.
		it.PageInfo().MaxSize = listPageSize
		for {
			a, err := it.Next()
			if err == iterator.Done {
				return
			}
			if err != nil {
				yield(gateway.Attrs{}, wrap(ctx, "list", prefix, gateway.None(), err))
				return
			}
			if a.Name == "" || strings.HasSuffix(a.Name, "/") {
				continue
			}
			key := strings.TrimPrefix(a.Name, s.prefix)
			if !yield(gateway.Attrs{Key: key, Size: a.Size, Version: version(a.Generation), Modified: a.Updated}, nil) {
				return
			}
		}
	}
}

// Put stores data under key subject to c. Small objects go in one request;
// objects larger than the chunk size as a resumable upload.
func (s *Store) Put(ctx context.Context, key string, data []byte, c gateway.Cond) (gateway.Version, error) {
	obj, err := s.object("put", key)
	if err != nil {
		return "", err
	}
	if err := gateway.CheckPutCond(key, c); err != nil {
		return "", err
	}
	if err := ctxErr(ctx, "put", key); err != nil {
		return "", err
	}
	chunk := min(roundUp(len(data)+1), s.chunkSize)
	crc := crc32.Checksum(data, crc32cTable)
	return s.write(ctx, key, obj, c, bytes.NewReader(data), chunk, &crc)
}

// PutStream stores what r yields under key subject to c, as a resumable
// upload in chunks of the configured size (one chunk buffered). Cancelling
// ctx, or r failing, aborts the upload: no object is created.
func (s *Store) PutStream(ctx context.Context, key string, r io.Reader, c gateway.Cond) (gateway.Version, error) {
	obj, err := s.object("put", key)
	if err != nil {
		return "", err
	}
	if err := gateway.CheckPutCond(key, c); err != nil {
		return "", err
	}
	if err := ctxErr(ctx, "put", key); err != nil {
		return "", err
	}
	return s.write(ctx, key, obj, c, r, s.chunkSize, nil)
}

// write uploads r to obj under condition c. crc is the CRC32C of the data
// when known in advance (it is then sent for the service to verify).
func (s *Store) write(ctx context.Context, key string, obj *storage.ObjectHandle, c gateway.Cond, r io.Reader, chunk int, crc *uint32) (gateway.Version, error) {
	target := obj
	switch c.Kind {
	case gateway.CondIfAbsent:
		target = target.If(storage.Conditions{DoesNotExist: true})
	case gateway.CondIfMatch:
		gen, ok := generation(c.Version)
		if !ok {
			return "", gateway.E("put", key, gateway.ErrPrecondition, fmt.Errorf("version %q is no GCS generation", c.Version))
		}
		target = target.If(storage.Conditions{GenerationMatch: gen})
	case gateway.CondNone:
		// An unconditional write of the same bytes is safe to repeat.
		target = target.Retryer(storage.WithPolicy(storage.RetryAlways))
	}
	target, tries := s.track(target)

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
		return "", gateway.E("put", key, gateway.ErrUnavailable, fmt.Errorf("reading the data to upload: %w", src.err))
	}
	err := w.Close()
	if err == nil && copyErr != nil {
		err = copyErr
	}
	if err == nil {
		if a := w.Attrs(); a != nil {
			return version(a.Generation), nil
		}
		return "", gateway.E("put", key, gateway.ErrUnavailable, errors.New("upload finished without object metadata"))
	}
	if isPrecondition(err) && c.Kind != gateway.CondNone {
		// An earlier attempt (the library's retry) or an earlier delivery
		// of this very request (a replay on the way) may have landed: look
		// for this write's id.
		r := gateway.Refused{Op: "put", Key: key, Cond: c, Err: err, Retried: tries.retried.Load()}
		return r.Settle(ctx, func(ctx context.Context) (gateway.Version, bool, error) {
			a, err := obj.Attrs(ctx)
			if err != nil {
				return "", false, err
			}
			return version(a.Generation), a.Metadata[WriteIDKey] == id && a.Size == src.n && a.CRC32C == src.sum(), nil
		}, isNotFound)
	}
	return "", wrap(ctx, "put", key, c, err)
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

// Delete removes key; with IfMatch only while its generation is the given
// one (ifGenerationMatch, checked by the service).
func (s *Store) Delete(ctx context.Context, key string, c gateway.Cond) error {
	obj, err := s.object("delete", key)
	if err != nil {
		return err
	}
	if err := gateway.CheckDeleteCond(key, c); err != nil {
		return err
	}
	if err := ctxErr(ctx, "delete", key); err != nil {
		return err
	}
	if c.Kind == gateway.CondIfMatch {
		gen, ok := generation(c.Version)
		if !ok {
			return gateway.E("delete", key, gateway.ErrPrecondition, fmt.Errorf("version %q is no GCS generation", c.Version))
		}
		obj = obj.If(storage.Conditions{GenerationMatch: gen})
	}
	obj, tries := s.track(obj)
	err = obj.Delete(ctx)
	if err == nil {
		return nil
	}
	if c.Kind == gateway.CondIfMatch && tries.retried.Load() && isNotFound(err) {
		return nil // an earlier attempt of this call removed it
	}
	return wrap(ctx, "delete", key, c, err)
}

// roundUp returns n rounded up to the upload quantum (256 KiB).
func roundUp(n int) int {
	if n <= 0 {
		return uploadQuantum
	}
	return (n + uploadQuantum - 1) / uploadQuantum * uploadQuantum
}

package s3serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"hash"
	"io"

	"github.com/ckgate/ckgate/gateway"
)

// writeIDMeta is the user metadata (x-amz-meta-ckgate-write-id) that
// ckgate's own S3 driver (gateway/s3store) sends with every write: a fresh
// id per write, which it reads back to tell its own earlier attempt from
// another writer's when the SDK's retry of a conditional write is refused.
// The stores behind the front door keep no object metadata, so that read
// back cannot work through it; ownRetry settles the retry here instead.
const writeIDMeta = "ckgate-write-id"

// summingReader hashes and counts what is read through it.
type summingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func newSummingReader(r io.Reader) *summingReader { return &summingReader{r: r, h: sha256.New()} }

func (s *summingReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	return n, err
}

// ownRetry decides a conditional PutObject of full (bucket/key) that the
// store refused (err: ErrExists or ErrPrecondition), from a client that
// sent a ckgate write id (meta): when the stored object holds exactly the
// request's bytes, the refusal is the client's own earlier attempt seen
// again (applied by this or another front door that crashed or was cut
// off before answering, then retried by the SDK) and the write is answered
// as applied, with the stored version. ckgate's writes are unique by
// content (a log entry carries the writer's epoch, the writer record a
// fresh write id, state and data files unique names), so equal bytes are
// the writer's own. Anything else, and every client without the write id,
// keeps the refusal (412).
func (b *storeBackend) ownRetry(ctx context.Context, full string, meta map[string]string, body *summingReader, err error) (gateway.Version, bool) {
	if meta[writeIDMeta] == "" || !(errors.Is(err, gateway.ErrExists) || errors.Is(err, gateway.ErrPrecondition)) {
		return "", false
	}
	// A store may refuse before reading the whole body: the request's
	// bytes are all of it (its signature is checked as it is read).
	if _, err := io.Copy(io.Discard, body); err != nil {
		return "", false
	}
	rc, a, err := b.raw.GetStream(ctx, full)
	if err != nil {
		return "", false
	}
	defer rc.Close()
	if a.Size != body.n {
		return "", false
	}
	h := sha256.New()
	if n, err := io.Copy(h, io.LimitReader(rc, a.Size+1)); err != nil || n != a.Size {
		return "", false
	}
	if !bytes.Equal(h.Sum(nil), body.h.Sum(nil)) {
		return "", false
	}
	return a.Version, true
}

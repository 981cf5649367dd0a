package s3store

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/ckgate/ckgate/gateway"
)

// maxParts is S3's limit on the parts of one multipart upload.
const maxParts = 10000

// abortTimeout bounds the AbortMultipartUpload sent after a failure, which
// runs even when the caller's context is cancelled.
const abortTimeout = 30 * time.Second

// PutStream stores what r yields under key. A stream shorter than two parts
// is sent with one PutObject; a longer one goes through a multipart upload
// whose parts are not visible until CompleteMultipartUpload, which carries
// the condition (If-None-Match / If-Match) and publishes the object
// atomically. Any failure, a cancelled context included, aborts the upload:
// no partial object is left behind. At most two parts are held in memory.
func (s *driver) PutStream(ctx context.Context, key string, r io.Reader, c gateway.Cond) (gateway.Version, error) {
	// The first part is read into a buffer that grows with what r yields:
	// a small object (most checkpoint files) costs its size, not a part.
	first, err := io.ReadAll(io.LimitReader(r, s.partSize))
	if err != nil {
		return "", readFailed(key, err)
	}
	n0 := len(first)
	if int64(n0) < s.partSize {
		return s.Put(ctx, key, first, c)
	}
	bufs := [2][]byte{first[:n0:n0], make([]byte, s.partSize)}
	n1, eof, err := fill(r, bufs[1])
	if err != nil {
		return "", readFailed(key, err)
	}
	if n1 == 0 {
		return s.Put(ctx, key, bufs[0][:n0], c)
	}
	return s.multipart(ctx, key, r, c, bufs, n0, n1, eof)
}

func readFailed(key string, err error) error {
	return gateway.E("put", key, classify(err), fmt.Errorf("read the stream: %w", err))
}

// fill reads len(buf) bytes or up to the end of r.
func fill(r io.Reader, buf []byte) (n int, eof bool, err error) {
	n, err = io.ReadFull(r, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return n, true, nil
	}
	return n, false, err
}

// multipart uploads bufs[0][:n0], bufs[1][:n1] and the rest of r (unless
// eof) as the parts of one multipart upload.
func (s *driver) multipart(ctx context.Context, key string, r io.Reader, c gateway.Cond, bufs [2][]byte, n0, n1 int, eof bool) (gateway.Version, error) {
	var t tracker
	created, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket:            &s.bucket,
		Key:               s.full(key),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
	}, t.option)
	if err != nil {
		return "", fail("put", key, err)
	}
	up := &upload{s: s, key: key, id: created.UploadId}
	v, err := up.run(ctx, r, c, bufs, n0, n1, eof)
	if err != nil && !up.done {
		if aerr := up.abort(ctx); aerr != nil {
			var ge *gateway.Error
			if errors.As(err, &ge) {
				err = &gateway.Error{Op: ge.Op, Key: ge.Key, Kind: ge.Kind,
					Err: errors.Join(ge.Err, fmt.Errorf("abort multipart upload (its parts stay until a lifecycle rule removes them): %w", aerr))}
			}
		}
	}
	return v, err
}

type upload struct {
	s     *driver
	key   string
	id    *string
	parts []types.CompletedPart
	done  bool // completed, or known to be gone
}

func (u *upload) run(ctx context.Context, r io.Reader, c gateway.Cond, bufs [2][]byte, n0, n1 int, eof bool) (gateway.Version, error) {
	cur, curN := 0, n0
	nxtN, nxtEOF := n1, eof
	for num := int32(1); ; num++ {
		if num > maxParts {
			return "", gateway.E("put", u.key, gateway.ErrUnsupported,
				fmt.Errorf("stream needs more than %d parts of %d bytes", maxParts, u.s.partSize))
		}
		if err := u.part(ctx, num, bufs[cur][:curN]); err != nil {
			return "", err
		}
		if nxtN == 0 {
			break
		}
		cur, curN = 1-cur, nxtN
		if nxtEOF {
			nxtN = 0
			continue
		}
		var err error
		nxtN, nxtEOF, err = fill(r, bufs[1-cur])
		if err != nil {
			return "", readFailed(u.key, err)
		}
	}
	return u.complete(ctx, c)
}

func (u *upload) part(ctx context.Context, num int32, data []byte) error {
	var t tracker
	out, err := u.s.client.UploadPart(ctx, &s3.UploadPartInput{
		Bucket:            &u.s.bucket,
		Key:               u.s.full(u.key),
		UploadId:          u.id,
		PartNumber:        aws.Int32(num),
		Body:              bytes.NewReader(data),
		ContentLength:     aws.Int64(int64(len(data))),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
	}, t.option)
	if err != nil {
		return fail("put", u.key, err)
	}
	u.parts = append(u.parts, types.CompletedPart{
		PartNumber:    aws.Int32(num),
		ETag:          out.ETag,
		ChecksumCRC32: out.ChecksumCRC32,
	})
	return nil
}

func (u *upload) complete(ctx context.Context, c gateway.Cond) (gateway.Version, error) {
	s := u.s
	ifMatch, ifNoneMatch := condHeaders(c)
	ambiguous := false
	for attempt := 0; ; attempt++ {
		var t tracker
		out, err := s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
			Bucket:          &s.bucket,
			Key:             s.full(u.key),
			UploadId:        u.id,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: u.parts},
			IfMatch:         ifMatch,
			IfNoneMatch:     ifNoneMatch,
		}, t.option)
		ambiguous = ambiguous || t.ambiguous
		if err == nil {
			u.done = true
			v := version(out.ETag)
			if ambiguous {
				// A retried completion may answer for the first one
				// without the object's ETag: read the one stored.
				if hv, ok, herr := u.stored(ctx); herr == nil && ok {
					v = hv
				}
			}
			return v, nil
		}
		code := errorCode(err)
		if code == codeConditionConflict && attempt < s.conflictRetries {
			if werr := s.wait(ctx, attempt); werr != nil {
				return "", gateway.E("put", u.key, gateway.ErrUnavailable, errors.Join(err, werr))
			}
			continue
		}
		if ambiguous && code == codeNoSuchUpload {
			// The upload is gone: our earlier attempt may have completed it.
			v, ok, herr := u.stored(ctx)
			if herr == nil && ok {
				u.done = true
				return v, nil
			}
			return "", gateway.E("put", u.key, gateway.ErrUnknownOutcome,
				fmt.Errorf("the multipart upload vanished after a retried completion: %w", err))
		}
		if refused(c, err) {
			// The ETag of our parts is no write id: another writer's
			// identical object has the same. Read back only when an
			// attempt of ours may have been applied.
			var mine func(context.Context) (gateway.Version, bool, error)
			if ambiguous {
				mine = u.stored
			}
			r := gateway.Refused{Op: "put", Key: u.key, Cond: c, Err: err, Retried: ambiguous}
			return r.Settle(ctx, mine, missing)
		}
		return "", fail("put", u.key, err)
	}
}

// stored reports the stored object's version and whether it is the object
// this upload assembles (its ETag is the multipart ETag of our parts).
func (u *upload) stored(ctx context.Context) (gateway.Version, bool, error) {
	h, err := u.s.head(ctx, u.key)
	if err != nil {
		return "", false, err
	}
	v := version(h.ETag)
	want := multipartETag(u.parts)
	return v, want != "" && sameVersion(v, want), nil
}

// multipartETag is S3's ETag of an object assembled from parts: the MD5 of
// the concatenated binary part MD5s, "-", the number of parts. It returns
// "" when a part ETag is not an MD5 (some encryption modes).
func multipartETag(parts []types.CompletedPart) gateway.Version {
	h := md5.New()
	for _, p := range parts {
		b, err := hex.DecodeString(strings.Trim(aws.ToString(p.ETag), `"`))
		if err != nil || len(b) != md5.Size {
			return ""
		}
		h.Write(b)
	}
	return gateway.Version(`"` + hex.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(parts)) + `"`)
}

// abort discards the upload's parts, even when ctx is cancelled.
func (u *upload) abort(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	var t tracker
	_, err := u.s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
		Bucket:   &u.s.bucket,
		Key:      u.s.full(u.key),
		UploadId: u.id,
	}, t.option)
	if errorCode(err) == codeNoSuchUpload {
		return nil
	}
	return err
}

package azstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/ckgate/ckgate/gateway"
)

// PutStream writes r under key subject to c. A stream shorter than one
// block is one Put Blob; a longer one is staged block by block (one block
// in memory at a time) and committed with the condition, so that nothing
// is visible under key before the commit.
func (s *driver) PutStream(ctx context.Context, key string, r io.Reader, c gateway.Cond) (gateway.Version, error) {
	name := key
	if err := ctx.Err(); err != nil {
		return "", gateway.E("put", key, gateway.ErrUnavailable, fmt.Errorf("read stream: %w", err))
	}
	// The first block is read into a buffer that grows with what r
	// yields: a small blob (most checkpoint files) costs its size, not a
	// block.
	first, err := io.ReadAll(io.LimitReader(r, int64(s.blockSize)))
	switch {
	case err != nil:
		return "", gateway.E("put", key, gateway.ErrUnavailable, fmt.Errorf("read stream: %w", err))
	case len(first) < s.blockSize:
		return s.upload(ctx, key, name, first, c)
	}
	buf := make([]byte, s.blockSize)
	n := copy(buf, first)
	return s.commitStream(ctx, key, name, r, buf[:n], c)
}

// blockID returns the id of block i of the write id: unique to the write
// (concurrent writes of one key never replace each other's staged blocks)
// and of one length for every write, as Azure requires of the block ids
// of a blob.
func blockID(id string, i int) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%s-%05d", id, i))
}

// commitStream stages first and the rest of r, then commits them under c.
func (s *driver) commitStream(ctx context.Context, key, name string, r io.Reader, first []byte, c gateway.Cond) (gateway.Version, error) {
	id := newWriteID()
	bb := s.blob(name)
	sum := md5.New()
	var ids []string
	block := first
	for {
		if len(ids) == maxBlocks {
			return "", gateway.E("put", key, gateway.ErrUnsupported,
				fmt.Errorf("stream longer than %d blocks of %d bytes", maxBlocks, s.blockSize))
		}
		sum.Write(block)
		bid := blockID(id, len(ids))
		if err := stage(ctx, bb, bid, block); err != nil {
			return "", e("put", key, err)
		}
		ids = append(ids, bid)
		n, err := readBlock(ctx, r, block[:cap(block)])
		if errors.Is(err, io.EOF) && n == 0 {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return "", gateway.E("put", key, gateway.ErrUnavailable, fmt.Errorf("read stream: %w", err))
		}
		block = block[:n]
	}
	return s.commitBlocks(ctx, key, name, id, ids, sum.Sum(nil), c, true)
}

func stage(ctx context.Context, bb *blockblob.Client, bid string, block []byte) error {
	sum := md5.Sum(block)
	_, err := bb.StageBlock(ctx, bid, streaming.NopCloser(bytes.NewReader(block)), &blockblob.StageBlockOptions{
		TransactionalValidation: blob.TransferValidationTypeMD5(sum[:]),
	})
	return err
}

// commit writes blocks (each within the block size) as one blob under c
// by staging and committing them.
func (s *driver) commit(ctx context.Context, key, name string, blocks [][]byte, c gateway.Cond, again bool) (gateway.Version, error) {
	id := newWriteID()
	bb := s.blob(name)
	sum := md5.New()
	var ids []string
	for _, b := range blocks {
		if len(b) == 0 {
			continue // an empty blob is an empty block list
		}
		sum.Write(b)
		bid := blockID(id, len(ids))
		if err := stage(ctx, bb, bid, b); err != nil {
			return "", e("put", key, err)
		}
		ids = append(ids, bid)
	}
	return s.commitBlocks(ctx, key, name, id, ids, sum.Sum(nil), c, again)
}

// commitBlocks commits the staged blocks ids of write id under c. again
// allows one more commit when an IfAbsent commit is refused although no
// blob exists (it was deleted since).
func (s *driver) commitBlocks(ctx context.Context, key, name, id string, ids []string, sum []byte, c gateway.Cond, again bool) (gateway.Version, error) {
	tctx, t := withTries(ctx)
	resp, err := s.blob(name).CommitBlockList(tctx, ids, &blockblob.CommitBlockListOptions{
		Metadata:         map[string]*string{metaWriteID: &id},
		HTTPHeaders:      &blob.HTTPHeaders{BlobContentMD5: sum},
		AccessConditions: accessConditions(c),
	})
	if err == nil {
		return version(resp.ETag), nil
	}
	if bloberror.HasCode(err, bloberror.InvalidBlockList) {
		return "", s.blocksLost(ctx, key, name, c, err)
	}
	v, absent, err := s.writeFailed(ctx, key, name, c, id, t, err)
	if absent && again {
		return s.commitBlocks(ctx, key, name, id, ids, sum, c, false)
	}
	return v, err
}

// readBlock fills buf from r. It returns io.EOF when r ended (n may be
// positive) and any other error of r or ctx.
func readBlock(ctx context.Context, r io.Reader, buf []byte) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n, err := io.ReadFull(r, buf)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF:
		return n, io.EOF
	}
	return n, err
}

// blocksLost explains a commit refused because the staged blocks are gone:
// another writer committed the blob meanwhile, which discards every
// uncommitted block. Under a condition that is the lost race the condition
// would have reported.
func (s *driver) blocksLost(ctx context.Context, key, name string, c gateway.Cond, err error) error {
	p, perr := s.blob(name).GetProperties(ctx, nil)
	switch {
	case perr == nil && c.Kind == gateway.CondIfAbsent:
		return gateway.E("put", key, gateway.ErrExists, cause(err))
	case perr == nil && c.Kind == gateway.CondIfMatch && version(p.ETag) != c.Version:
		return gateway.E("put", key, gateway.ErrPrecondition, cause(err))
	case blobMissing(perr) && c.Kind == gateway.CondIfMatch:
		return gateway.E("put", key, gateway.ErrPrecondition, cause(err))
	}
	// A concurrent unconditional write: retrying the stream is safe.
	return gateway.E("put", key, gateway.ErrUnavailable, cause(err))
}

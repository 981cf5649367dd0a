package gateway

import (
	"context"
	"io"
)

// GetRange passes through: reads are not decided.
func (s *authorized) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, Attrs, error) {
	return GetRange(ctx, s.inner, key, off, n)
}

// ListPage passes through: reads are not decided.
func (s *authorized) ListPage(ctx context.Context, prefix, delim, after string, max int) (Page, error) {
	return ListPage(ctx, s.inner, prefix, delim, after, max)
}

// Copy decides the write of dst exactly as a PutStream of dst is decided
// (the same op, key, condition and size the policy sees), then copies with
// the condition the decision returned.
func (s *authorized) Copy(ctx context.Context, src, dst string, srcVersion Version, c Cond) (Version, error) {
	if err := checkCopy(src, dst, c); err != nil {
		return "", err
	}
	cond, err := s.decide(ctx, Call{Op: OpPut, Key: dst, Cond: c, Size: -1, Stream: true})
	if err != nil {
		return "", err
	}
	return Copy(ctx, s.inner, src, dst, srcVersion, cond)
}

package gateway

import (
	"context"
	"io"
)

// GetRange is one OpGet (Stream) call for f, the ranged read of the store
// below (see GetRange).
func (s *intercepted) GetRange(ctx context.Context, key string, off, n int64) (rc io.ReadCloser, a Attrs, err error) {
	err = s.f(ctx, Call{Op: OpGet, Key: key, Stream: true}, func(ctx context.Context) error {
		rc, a, err = GetRange(ctx, s.inner, key, off, n)
		return err
	})
	return rc, a, err
}

// ListPage is one OpList call for f, one page of the store below (see
// ListPage).
func (s *intercepted) ListPage(ctx context.Context, prefix, delim, after string, max int) (pg Page, err error) {
	err = s.f(ctx, Call{Op: OpList, Key: prefix}, func(ctx context.Context) error {
		pg, err = ListPage(ctx, s.inner, prefix, delim, after, max)
		return err
	})
	return pg, err
}

// Copy is one OpPut call for f, as a PutStream of dst is, and the copy of
// the store below (see Copy).
func (s *intercepted) Copy(ctx context.Context, src, dst string, srcVersion Version, c Cond) (v Version, err error) {
	err = s.f(ctx, Call{Op: OpPut, Key: dst, Cond: c, Size: -1, Stream: true}, func(ctx context.Context) error {
		v, err = Copy(ctx, s.inner, src, dst, srcVersion, c)
		return err
	})
	return v, err
}

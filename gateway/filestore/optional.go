package filestore

import (
	"context"
	"fmt"
	"io"

	"github.com/ckgate/ckgate/gateway"
)

var (
	_ gateway.RangeDriver = (*driver)(nil)
	_ gateway.PageDriver  = (*driver)(nil)
	_ gateway.CopyDriver  = (*driver)(nil)
)

// GetRange opens the object as GetStream does (never blocking, regular
// files only) and seeks to off: the bytes before it are not read.
func (s *driver) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, gateway.Attrs, error) {
	f, fi, err := s.openObject(ctx, "get", key)
	if err != nil {
		return nil, gateway.Attrs{}, err
	}
	off = min(off, fi.Size())
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		f.Close()
		return nil, gateway.Attrs{}, gateway.E("get", key, kindOf(err), err)
	}
	var r io.Reader = f
	if n >= 0 {
		r = io.LimitReader(f, n)
	}
	return readCloser{r, f}, attrs(key, fi), nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// ListPage walks the directories of prefix in byte order as List does,
// passing over (unread) the files and directories the page cannot hold:
// those at or before after, and the rest of a common prefix once it is in
// the page. It stops at the first entry past the page.
func (s *driver) ListPage(ctx context.Context, prefix, delim, after string, max int) (gateway.Page, error) {
	pb := gateway.NewPageBuilder(prefix, delim, after, max)
	var failed error
	s.walk(ctx, prefix, func(a gateway.Attrs, err error) bool {
		if err != nil {
			failed = err
			return false
		}
		return pb.Add(a)
	}, nil, func(name string, dir bool) bool {
		if dir {
			return pb.SkipsDir(name)
		}
		return pb.Skips(name)
	})
	if failed != nil {
		return gateway.Page{}, failed
	}
	return pb.Page(), nil
}

// Copy opens src as Get does (a FIFO, device or socket is refused, a link
// out of the root too), checks its version on that open file, and writes
// its bytes through Put's path: a temp file in dst's directory, fsynced,
// published create-only by link(2) or, under dst's lock, with IfMatch
// checked, by rename(2).
func (s *driver) Copy(ctx context.Context, src, dst string, srcVersion gateway.Version, c gateway.Cond) (gateway.Version, error) {
	f, fi, err := s.openObject(ctx, "copy", src)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if cur := version(fi); srcVersion != "" && cur != srcVersion {
		return "", gateway.E("copy", src, gateway.ErrPrecondition, fmt.Errorf("source version %s, want %s", cur, srcVersion))
	}
	size := fi.Size()
	return s.write(ctx, dst, c, size, func(w io.Writer) (int64, error) {
		return io.Copy(w, ctxReader{ctx, io.LimitReader(f, size)})
	})
}

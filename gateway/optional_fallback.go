package gateway

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"
)

// getRangeStream is the ranged read over a whole-object stream: it skips
// off bytes (none when off is at or past the size the store announced)
// and limits the rest to n.
func getRangeStream(ctx context.Context, open func(context.Context, string) (io.ReadCloser, Attrs, error), key string, off, n int64) (io.ReadCloser, Attrs, error) {
	rc, a, err := open(ctx, key)
	if err != nil {
		if rc != nil {
			rc.Close()
		}
		return nil, Attrs{}, err
	}
	if off >= a.Size || n == 0 {
		rc.Close()
		return io.NopCloser(strings.NewReader("")), a, nil
	}
	if off > 0 {
		if _, err := io.CopyN(io.Discard, rc, off); err != nil && err != io.EOF {
			rc.Close()
			return nil, Attrs{}, E("get", key, KindOr(err, ErrUnavailable), fmt.Errorf("skipping to offset %d: %w", off, err))
		}
	}
	if n < 0 {
		return rc, a, nil
	}
	return limitedReadCloser{io.LimitReader(rc, n), rc}, a, nil
}

type limitedReadCloser struct {
	io.Reader
	io.Closer
}

// pageOf builds one page from a full listing in byte order, stopping at
// the first entry past the page.
func pageOf(list iter.Seq2[Attrs, error], prefix, delim, after string, max int) (Page, error) {
	pb := NewPageBuilder(prefix, delim, after, max)
	for a, err := range list {
		if err != nil {
			return Page{}, err
		}
		if !pb.Add(a) {
			break
		}
	}
	return pb.Page(), nil
}

// copyStream is the copy through ckgate: src is opened once, its version
// checked on that open, and streamed into dst with c.
func copyStream(ctx context.Context, open func(context.Context, string) (io.ReadCloser, Attrs, error),
	put func(context.Context, string, io.Reader, Cond) (Version, error), src, dst string, srcVersion Version, c Cond) (Version, error) {
	rc, a, err := open(ctx, src)
	if err != nil {
		if rc != nil {
			rc.Close()
		}
		return "", err
	}
	defer rc.Close()
	if srcVersion != "" && a.Version != srcVersion {
		return "", E("copy", src, ErrPrecondition, fmt.Errorf("source version %s, want %s", a.Version, srcVersion))
	}
	return put(ctx, dst, rc, c)
}

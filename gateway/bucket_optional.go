package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

var (
	_ RangeReader = (*Bucket)(nil)
	_ PageLister  = (*Bucket)(nil)
	_ Copier      = (*Bucket)(nil)
)

// GetRange is GetRange (the package function) on b: the driver's ranged
// read when it is a RangeDriver, else its GetStream with the bytes before
// off read and discarded.
func (b *Bucket) GetRange(ctx context.Context, key string, off, n int64) (_ io.ReadCloser, _ Attrs, err error) {
	defer b.observe(OpGet, time.Now(), &err)
	if err := checkRange(key, off); err != nil {
		return nil, Attrs{}, err
	}
	name, err := b.full(ctx, "get", key)
	if err != nil {
		return nil, Attrs{}, err
	}
	var rc io.ReadCloser
	var a Attrs
	if rd, ok := b.d.(RangeDriver); ok {
		rc, a, err = rd.GetRange(ctx, name, off, n)
	} else {
		rc, a, err = getRangeStream(ctx, b.d.GetStream, name, off, n)
	}
	if err != nil {
		if rc != nil {
			rc.Close()
		}
		return nil, Attrs{}, b.fail("get", key, None(), err)
	}
	a.Key = key
	return &bucketReader{rc: rc, b: b, key: key}, a, nil
}

// ListPage is ListPage (the package function) on b: the driver's page
// when it is a PageDriver (one page of requests), else its List read up
// to the first entry past the page. Names are the caller's; a common
// prefix the driver reports again at or before after (S3's start-after
// inside it) is dropped; any other entry reported out of order, outside
// prefix or not after after is an ErrUnavailable error, never passed on.
func (b *Bucket) ListPage(ctx context.Context, prefix, delim, after string, max int) (_ Page, err error) {
	defer b.observe(OpList, time.Now(), &err)
	if err := checkPage(prefix, delim, max); err != nil {
		return Page{}, err
	}
	full, err := b.full(ctx, "list", prefix)
	if err != nil {
		return Page{}, err
	}
	pd, ok := b.d.(PageDriver)
	if !ok {
		return pageOf(b.unobserved().List(ctx, prefix), prefix, delim, after, max)
	}
	fullAfter := ""
	if after != "" {
		fullAfter = b.prefix + after
	}
	pg, err := pd.ListPage(ctx, full, delim, fullAfter, max)
	if err != nil {
		return Page{}, b.fail("list", prefix, None(), err)
	}
	return b.callerPage(prefix, full, fullAfter, max, pg)
}

// callerPage checks a driver's page and strips b's prefix from its names.
func (b *Bucket) callerPage(prefix, full, after string, max int, pg Page) (Page, error) {
	bad := func(format string, args ...any) (Page, error) {
		return Page{}, E("list", prefix, ErrUnavailable, fmt.Errorf("the store's page: "+format, args...))
	}
	if len(pg.Objects)+len(pg.Prefixes) > max {
		return bad("%d entries, asked for at most %d", len(pg.Objects)+len(pg.Prefixes), max)
	}
	check := func(names []string) error {
		prev := ""
		for _, n := range names {
			switch {
			case !strings.HasPrefix(n, full):
				return fmt.Errorf("%q is outside the prefix", n)
			case n <= after:
				return fmt.Errorf("%q does not sort after %q", n, after)
			case n <= prev:
				return fmt.Errorf("%q does not sort after %q", n, prev)
			}
			prev = n
		}
		return nil
	}
	// A service may report again the common prefix after is in (S3's
	// start-after inside a common prefix): the caller has had it.
	pg.Prefixes = slices.DeleteFunc(pg.Prefixes, func(p string) bool { return p <= after })
	keys := make([]string, len(pg.Objects))
	for i, a := range pg.Objects {
		keys[i] = a.Key
	}
	if err := errors.Join(check(keys), check(pg.Prefixes)); err != nil {
		return bad("%v", err)
	}
	out := Page{Truncated: pg.Truncated, Objects: pg.Objects, Prefixes: pg.Prefixes}
	for i := range out.Objects {
		out.Objects[i].Key = out.Objects[i].Key[len(b.prefix):]
	}
	for i, p := range out.Prefixes {
		out.Prefixes[i] = p[len(b.prefix):]
	}
	if pg.Truncated {
		if !strings.HasPrefix(pg.Next, full) || pg.Next <= after {
			return bad("next %q does not continue the listing", pg.Next)
		}
		out.Next = pg.Next[len(b.prefix):]
	}
	return out, nil
}

// Copy is Copy (the package function) on b: the driver's server-side copy
// when it is a CopyDriver, else src streamed through GetStream into
// PutStream of dst under c. Errors name src when src is absent or stale,
// dst otherwise.
func (b *Bucket) Copy(ctx context.Context, src, dst string, srcVersion Version, c Cond) (_ Version, err error) {
	defer b.observe(OpPut, time.Now(), &err)
	if err := checkCopy(src, dst, c); err != nil {
		return "", err
	}
	fsrc, err := b.full(ctx, "copy", src)
	if err != nil {
		return "", err
	}
	fdst, err := b.full(ctx, "copy", dst)
	if err != nil {
		return "", err
	}
	cd, ok := b.d.(CopyDriver)
	if !ok {
		u := b.unobserved()
		return copyStream(ctx, u.GetStream, u.PutStream, src, dst, srcVersion, c)
	}
	v, err := cd.Copy(ctx, fsrc, fdst, srcVersion, c)
	if err != nil {
		key, cond := dst, c
		var ge *Error
		if errors.As(err, &ge) && ge.Key == fsrc || !errors.As(err, &ge) && b.d.Kind(err, c) == ErrNotFound {
			key, cond = src, None()
		}
		return "", b.fail("copy", key, cond, err)
	}
	return v, nil
}

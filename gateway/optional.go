package gateway

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// The operations below (a ranged read, one listing page, a server-side
// copy) are answered by every Store: GetRange, ListPage and Copy call the
// Store's own method when it has one (a Bucket always has; it uses its
// driver's native operation or the same fallback), and fall back to the
// required methods otherwise, so a decorator stays correct without
// implementing them. Intercept (and so Metrics.Wrap and Faults.Wrap)
// passes each on as one call (a copy is the put of its destination), and
// an authorized store decides a copy as that put. The fallbacks cost
// what they say: GetRange reads and discards the bytes before off, ListPage
// lists from the start of prefix up to the page's end, Copy streams src
// through ckgate (GetStream then PutStream).

// RangeReader is a Store that reads part of an object itself (see GetRange).
type RangeReader interface {
	GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, Attrs, error)
}

// PageLister is a Store that lists one page itself (see ListPage).
type PageLister interface {
	ListPage(ctx context.Context, prefix, delim, after string, max int) (Page, error)
}

// Copier is a Store that copies an object itself (see Copy).
type Copier interface {
	Copy(ctx context.Context, src, dst string, srcVersion Version, c Cond) (Version, error)
}

// GetRange opens key of s for reading n bytes from off (n < 0: to the
// end), with the attributes of the whole object. A range that starts at or
// past the end yields no bytes; one that runs past the end stops at it. A
// negative off is ErrUnsupported; an absent key ErrNotFound.
func GetRange(ctx context.Context, s Store, key string, off, n int64) (io.ReadCloser, Attrs, error) {
	if err := checkRange(key, off); err != nil {
		return nil, Attrs{}, err
	}
	if r, ok := s.(RangeReader); ok {
		return r.GetRange(ctx, key, off, n)
	}
	return getRangeStream(ctx, s.GetStream, key, off, n)
}

// ListPage returns at most max entries (objects and common prefixes
// counted together) of the keys of s that start with prefix, in byte
// order, whose entry name sorts after after: with delim "" every key is
// an object; otherwise a key with delim after prefix is reported once, as
// its common prefix (prefix up to and including the first delim after
// it). An entry is reported only when its name (the key, or the common
// prefix) sorts after after, so the Next of a truncated page, given as the
// next page's after, continues exactly where the page stopped, even when
// it is a common prefix. max must be > 0; an invalid prefix is
// ErrInvalidKey.
func ListPage(ctx context.Context, s Store, prefix, delim, after string, max int) (Page, error) {
	if err := checkPage(prefix, delim, max); err != nil {
		return Page{}, err
	}
	if p, ok := s.(PageLister); ok {
		return p.ListPage(ctx, prefix, delim, after, max)
	}
	return pageOf(s.List(ctx, prefix), prefix, delim, after, max)
}

// Copy stores the current content of src under dst subject to c on dst
// (as Put: IfAbsent fails with ErrExists, IfMatch with ErrPrecondition),
// and only if src's version is srcVersion when that is not ""
// (ErrPrecondition naming src otherwise). An absent src is ErrNotFound
// naming src. It returns dst's new version. No partial dst is ever
// visible; dst's write is decided by an authorizer exactly as a PutStream
// of dst.
func Copy(ctx context.Context, s Store, src, dst string, srcVersion Version, c Cond) (Version, error) {
	if err := checkCopy(src, dst, c); err != nil {
		return "", err
	}
	if cp, ok := s.(Copier); ok {
		return cp.Copy(ctx, src, dst, srcVersion, c)
	}
	return copyStream(ctx, s.GetStream, s.PutStream, src, dst, srcVersion, c)
}

func checkRange(key string, off int64) error {
	if err := ValidateKey("get", key); err != nil {
		return err
	}
	if off < 0 {
		return E("get", key, ErrUnsupported, fmt.Errorf("negative range offset %d", off))
	}
	return nil
}

func checkPage(prefix, delim string, max int) error {
	if err := ValidatePrefix(prefix); err != nil {
		return err
	}
	if max <= 0 {
		return E("list", prefix, ErrUnsupported, fmt.Errorf("page size %d, want > 0", max))
	}
	if strings.ContainsRune(delim, 0) {
		return E("list", prefix, ErrUnsupported, fmt.Errorf("delimiter %q holds NUL", delim))
	}
	return nil
}

func checkCopy(src, dst string, c Cond) error {
	if err := ValidateKey("copy", src); err != nil {
		return err
	}
	if err := ValidateKey("copy", dst); err != nil {
		return err
	}
	return CheckPutCond(dst, c)
}

package gateway

import (
	"context"
	"io"
	"strings"
)

// The optional driver operations below carry an S3 front door (ckgate
// serve) without rescans or double transfers. A driver implements those
// its service has natively; the Bucket falls back to the required Driver
// methods for the others, so every Store answers them (see Bucket.GetRange,
// Bucket.ListPage, Bucket.Copy). Keys, prefixes and conditions reach a
// driver validated and prefixed, exactly as for the required methods.

// RangeDriver reads part of an object.
type RangeDriver interface {
	// GetRange must open key for reading n bytes from off (n < 0: to the
	// end), with the attributes of the whole object (Size is the object's
	// size, not the range's). A range that starts at or past the end
	// yields no bytes (never an error); one that runs past the end stops
	// at it. An absent key is an error Kind classifies as ErrNotFound.
	GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, Attrs, error)
}

// EmptyRange is a RangeDriver's read of no bytes of key (a zero-length
// range, or one the store refuses as starting at or past the end, as S3,
// GCS and Azure do with 416): an empty stream with the attributes stat
// gives key. The Bucket never asks a driver for a negative offset.
func EmptyRange(ctx context.Context, stat func(context.Context, string) (Attrs, error), key string) (io.ReadCloser, Attrs, error) {
	a, err := stat(ctx, key)
	if err != nil {
		return nil, Attrs{}, err
	}
	return io.NopCloser(strings.NewReader("")), a, nil
}

// Page is one page of a listing: the objects and common prefixes (each
// ending in the delimiter) in byte order, with full (prefixed) names at
// the driver and the caller's names at the Bucket.
type Page struct {
	Objects  []Attrs
	Prefixes []string
	// Truncated reports that more entries follow; Next is then the last
	// name of the page (an object key or a common prefix), the after of
	// the next page.
	Truncated bool
	Next      string
}

// PageDriver lists one page without reading what comes before it.
type PageDriver interface {
	// ListPage must return at most max (> 0) entries, objects and common
	// prefixes counted together, of the keys that start with prefix and
	// sort after after (after may be ""), grouping by delim when it is not
	// "": a key with delim after prefix is reported once, as its common
	// prefix (prefix up to and including the first delim after it).
	ListPage(ctx context.Context, prefix, delim, after string, max int) (Page, error)
}

// CopyDriver copies an object inside the store (S3 CopyObject, GCS
// rewrite, Azure copy, a copy on the local disk) without the bytes
// passing through ckgate.
type CopyDriver interface {
	// Copy must store the current content of src under dst, atomically,
	// subject to c on dst (as Put: IfAbsent fails with ErrExists, IfMatch
	// with ErrPrecondition), and only if src's version is srcVersion when
	// that is not "" (ErrPrecondition otherwise), returning dst's new
	// version. An absent src is ErrNotFound. A driver whose service cannot
	// honour c or srcVersion atomically must not implement CopyDriver.
	Copy(ctx context.Context, src, dst string, srcVersion Version, c Cond) (Version, error)
}

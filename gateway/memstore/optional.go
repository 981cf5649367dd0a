package memstore

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

var (
	_ gateway.RangeDriver = (*driver)(nil)
	_ gateway.PageDriver  = (*driver)(nil)
	_ gateway.CopyDriver  = (*driver)(nil)
)

// GetRange reads off..off+n of the object as it is now.
func (d *driver) GetRange(_ context.Context, key string, off, n int64) (io.ReadCloser, gateway.Attrs, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.objs[key]
	if !ok {
		return nil, gateway.Attrs{}, errNoSuchKey
	}
	b := o.data[min(off, int64(len(o.data))):]
	if n >= 0 && n < int64(len(b)) {
		b = b[:n]
	}
	return io.NopCloser(bytes.NewReader(b)), o.attrs(key), nil
}

// ListPage builds one page from the keys after after.
func (d *driver) ListPage(_ context.Context, prefix, delim, after string, max int) (gateway.Page, error) {
	d.mu.Lock()
	var keys []gateway.Attrs
	for k, o := range d.objs {
		if strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, o.attrs(k))
		}
	}
	d.mu.Unlock()
	slices.SortFunc(keys, func(a, b gateway.Attrs) int { return strings.Compare(a.Key, b.Key) })
	pb := gateway.NewPageBuilder(prefix, delim, after, max)
	for _, a := range keys {
		if !pb.Add(a) {
			break
		}
	}
	return pb.Page(), nil
}

// Copy stores src's bytes under dst under one lock: the source version
// check, dst's condition and the write are one step.
func (d *driver) Copy(_ context.Context, src, dst string, srcVersion gateway.Version, c gateway.Cond) (gateway.Version, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.objs[src]
	switch {
	case !ok:
		return "", gateway.E("copy", src, gateway.ErrNotFound, errNoSuchKey)
	case srcVersion != "" && s.version != srcVersion:
		return "", gateway.E("copy", src, gateway.ErrPrecondition, errStale)
	}
	return d.putLocked(dst, s.data, c)
}

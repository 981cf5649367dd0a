// Package memstore is an in-memory gateway.Store for fast unit tests. It
// passes the conformance suite but is never what a user's job runs on.
package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

type object struct {
	data     []byte
	version  gateway.Version
	modified time.Time
}

// Store is an in-memory store: the portable gateway.Bucket over the
// memstore driver. Call New.
type Store = gateway.Bucket

// New returns an empty store.
func New() *Store { return gateway.NewBucket(&driver{objs: map[string]object{}}, "") }

// The driver's own errors; Kind classifies them.
var (
	errNoSuchKey = errors.New("memstore: no such key")
	errExists    = errors.New("memstore: key exists")
	errStale     = errors.New("memstore: version differs")
)

// driver is the whole of what memstore implements: the raw operations
// on a map, and Kind. Keys, conditions, contexts, the prefix and error
// wrapping are the gateway.Bucket's.
type driver struct {
	mu   sync.Mutex
	objs map[string]object
	next uint64
}

func (d *driver) Kind(err error, _ gateway.Cond) error {
	switch {
	case errors.Is(err, errNoSuchKey):
		return gateway.ErrNotFound
	case errors.Is(err, errExists):
		return gateway.ErrExists
	case errors.Is(err, errStale):
		return gateway.ErrPrecondition
	}
	return gateway.ErrUnavailable // the caller's reader failed (PutStream)
}

func (d *driver) Get(_ context.Context, key string) ([]byte, gateway.Version, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.objs[key]
	if !ok {
		return nil, "", errNoSuchKey
	}
	return bytes.Clone(o.data), o.version, nil
}

func (d *driver) Stat(_ context.Context, key string) (gateway.Attrs, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.objs[key]
	if !ok {
		return gateway.Attrs{}, errNoSuchKey
	}
	return o.attrs(key), nil
}

func (o object) attrs(key string) gateway.Attrs {
	return gateway.Attrs{Key: key, Size: int64(len(o.data)), Version: o.version, Modified: o.modified}
}

func (d *driver) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.objs[key]
	if !ok {
		return nil, gateway.Attrs{}, errNoSuchKey
	}
	return io.NopCloser(bytes.NewReader(o.data)), o.attrs(key), nil
}

func (d *driver) List(_ context.Context, prefix string) iter.Seq2[gateway.Attrs, error] {
	return func(yield func(gateway.Attrs, error) bool) {
		d.mu.Lock()
		var out []gateway.Attrs
		for k, o := range d.objs {
			if strings.HasPrefix(k, prefix) {
				out = append(out, o.attrs(k))
			}
		}
		d.mu.Unlock()
		slices.SortFunc(out, func(a, b gateway.Attrs) int { return strings.Compare(a.Key, b.Key) })
		for _, a := range out {
			if !yield(a, nil) {
				return
			}
		}
	}
}

func (d *driver) Put(_ context.Context, key string, data []byte, c gateway.Cond) (gateway.Version, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.putLocked(key, data, c)
}

// putLocked is Put with d.mu held.
func (d *driver) putLocked(key string, data []byte, c gateway.Cond) (gateway.Version, error) {
	o, ok := d.objs[key]
	switch {
	case c.Kind == gateway.CondIfAbsent && ok:
		return "", errExists
	case c.Kind == gateway.CondIfMatch && (!ok || o.version != c.Version):
		return "", errStale
	}
	d.next++
	v := gateway.Version(strconv.FormatUint(d.next, 10))
	d.objs[key] = object{data: bytes.Clone(data), version: v, modified: time.Now()}
	return v, nil
}

func (d *driver) PutStream(ctx context.Context, key string, r io.Reader, c gateway.Cond) (gateway.Version, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("reading the data to store: %w", err)
	}
	return d.Put(ctx, key, data, c)
}

func (d *driver) Delete(_ context.Context, key string, c gateway.Cond) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.objs[key]
	switch {
	case !ok:
		return errNoSuchKey
	case c.Kind == gateway.CondIfMatch && o.version != c.Version:
		return errStale
	}
	delete(d.objs, key)
	return nil
}

// Named holds in-memory stores by name (a mem://NAME URL's host), each
// made on first use, so that every open of one name sees the same keys.
// The zero value is ready; it is safe for concurrent use.
type Named struct {
	mu     sync.Mutex
	stores map[string]*Store
}

// Open opens mem://NAME[/PREFIX]: the store called NAME (see Get), under
// PREFIX when the URL has a path. It is a gateway.OpenFunc. Any other form
// (no name, user info, a query or fragment) is refused with an error
// wrapping gateway.ErrInvalidURL.
func (n *Named) Open(_ context.Context, u *url.URL) (gateway.Store, error) {
	bad := func(why string) (gateway.Store, error) {
		return nil, fmt.Errorf("%w %q: %s (want mem://NAME[/PREFIX])", gateway.ErrInvalidURL, gateway.Redact(u.String()), why)
	}
	switch {
	case u.Scheme != "mem":
		return bad("scheme is not mem")
	case u.Opaque != "":
		return bad("no '//' after the scheme")
	case u.Host == "":
		return bad("no store name")
	case u.User != nil, u.RawQuery != "", u.Fragment != "":
		return bad("user info, query and fragment are not allowed")
	}
	prefix := strings.Trim(u.Path, "/")
	if err := gateway.ValidatePrefix(prefix); err != nil {
		return bad(err.Error())
	}
	return n.Get(u.Host).WithPrefix(prefix), nil
}

// Get returns the store called name, making it if there is none yet.
func (n *Named) Get(name string) *Store {
	n.mu.Lock()
	defer n.mu.Unlock()
	s, ok := n.stores[name]
	if !ok {
		if n.stores == nil {
			n.stores = map[string]*Store{}
		}
		s = New()
		n.stores[name] = s
	}
	return s
}

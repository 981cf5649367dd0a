// Package memstore is an in-memory gateway.Store for fast unit tests. It
// passes the conformance suite but is never what a user's job runs on.
package memstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"net/url"
	"sort"
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

// Store is an in-memory store. The zero value is not usable; call New.
type Store struct {
	mu   sync.Mutex
	objs map[string]object
	next uint64
}

// New returns an empty store.
func New() *Store { return &Store{objs: map[string]object{}} }

func ctxErr(ctx context.Context, op, key string) error {
	if err := ctx.Err(); err != nil {
		return gateway.E(op, key, gateway.ErrUnavailable, err)
	}
	return nil
}

func (s *Store) Get(ctx context.Context, key string) ([]byte, gateway.Version, error) {
	if err := gateway.ValidateKey("get", key); err != nil {
		return nil, "", err
	}
	if err := ctxErr(ctx, "get", key); err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key]
	if !ok {
		return nil, "", gateway.E("get", key, gateway.ErrNotFound, nil)
	}
	return bytes.Clone(o.data), o.version, nil
}

func (s *Store) Stat(ctx context.Context, key string) (gateway.Attrs, error) {
	if err := gateway.ValidateKey("stat", key); err != nil {
		return gateway.Attrs{}, err
	}
	if err := ctxErr(ctx, "stat", key); err != nil {
		return gateway.Attrs{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key]
	if !ok {
		return gateway.Attrs{}, gateway.E("stat", key, gateway.ErrNotFound, nil)
	}
	return gateway.Attrs{Key: key, Size: int64(len(o.data)), Version: o.version, Modified: o.modified}, nil
}

func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[gateway.Attrs, error] {
	return func(yield func(gateway.Attrs, error) bool) {
		if err := gateway.ValidatePrefix(prefix); err != nil {
			yield(gateway.Attrs{}, err)
			return
		}
		if err := ctxErr(ctx, "list", prefix); err != nil {
			yield(gateway.Attrs{}, err)
			return
		}
		s.mu.Lock()
		var out []gateway.Attrs
		for k, o := range s.objs {
			if strings.HasPrefix(k, prefix) {
				out = append(out, gateway.Attrs{Key: k, Size: int64(len(o.data)), Version: o.version, Modified: o.modified})
			}
		}
		s.mu.Unlock()
		sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
		for _, a := range out {
			if !yield(a, nil) {
				return
			}
		}
	}
}

func (s *Store) Put(ctx context.Context, key string, data []byte, c gateway.Cond) (gateway.Version, error) {
	if err := gateway.ValidateKey("put", key); err != nil {
		return "", err
	}
	if err := gateway.CheckPutCond(key, c); err != nil {
		return "", err
	}
	if err := ctxErr(ctx, "put", key); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key]
	switch {
	case c.Kind == gateway.CondIfAbsent && ok:
		return "", gateway.E("put", key, gateway.ErrExists, nil)
	case c.Kind == gateway.CondIfMatch && (!ok || o.version != c.Version):
		return "", gateway.E("put", key, gateway.ErrPrecondition, nil)
	}
	s.next++
	v := gateway.Version(strconv.FormatUint(s.next, 10))
	s.objs[key] = object{data: bytes.Clone(data), version: v, modified: time.Now()}
	return v, nil
}

func (s *Store) PutStream(ctx context.Context, key string, r io.Reader, c gateway.Cond) (gateway.Version, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return "", gateway.E("put", key, gateway.ErrUnavailable, err)
	}
	return s.Put(ctx, key, data, c)
}

func (s *Store) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	data, v, err := s.Get(ctx, key)
	if err != nil {
		return nil, gateway.Attrs{}, err
	}
	return io.NopCloser(bytes.NewReader(data)), gateway.Attrs{Key: key, Size: int64(len(data)), Version: v}, nil
}

func (s *Store) Delete(ctx context.Context, key string, c gateway.Cond) error {
	if err := gateway.ValidateKey("delete", key); err != nil {
		return err
	}
	if err := gateway.CheckDeleteCond(key, c); err != nil {
		return err
	}
	if err := ctxErr(ctx, "delete", key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key]
	switch {
	case !ok:
		return gateway.E("delete", key, gateway.ErrNotFound, nil)
	case c.Kind == gateway.CondIfMatch && o.version != c.Version:
		return gateway.E("delete", key, gateway.ErrPrecondition, nil)
	}
	delete(s.objs, key)
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
	return gateway.WithPrefix(n.Get(u.Host), prefix), nil
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

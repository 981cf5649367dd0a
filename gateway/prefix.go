package gateway

import (
	"context"
	"errors"
	"io"
	"iter"
	"strings"
)

// WithPrefix returns a Store that keeps every key of s under prefix (a
// relative key prefix such as "team/query-1/"; a missing trailing '/' is
// added). Keys seen by the caller never include the prefix. A Bucket
// prefixes itself (Bucket.WithPrefix); any other Store is wrapped.
func WithPrefix(s Store, prefix string) Store {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return s
	}
	if b, ok := s.(*Bucket); ok {
		return b.WithPrefix(prefix)
	}
	return &prefixStore{inner: s, prefix: prefix + "/"}
}

type prefixStore struct {
	inner  Store
	prefix string
}

func (p *prefixStore) full(op, key string) (string, error) {
	if err := ValidateKey(op, key); err != nil {
		return "", err
	}
	return p.prefix + key, nil
}

// strip rewrites the key named by an inner error to the caller's key.
func (p *prefixStore) strip(err error) error {
	var ge *Error
	if errors.As(err, &ge) && strings.HasPrefix(ge.Key, p.prefix) {
		return &Error{Op: ge.Op, Key: strings.TrimPrefix(ge.Key, p.prefix), Kind: ge.Kind, Err: ge.Err}
	}
	return err
}

func (p *prefixStore) Get(ctx context.Context, key string) ([]byte, Version, error) {
	k, err := p.full("get", key)
	if err != nil {
		return nil, "", err
	}
	b, v, err := p.inner.Get(ctx, k)
	return b, v, p.strip(err)
}

func (p *prefixStore) Stat(ctx context.Context, key string) (Attrs, error) {
	k, err := p.full("stat", key)
	if err != nil {
		return Attrs{}, err
	}
	a, err := p.inner.Stat(ctx, k)
	a.Key = key
	return a, p.strip(err)
}

func (p *prefixStore) List(ctx context.Context, prefix string) iter.Seq2[Attrs, error] {
	return func(yield func(Attrs, error) bool) {
		if err := ValidatePrefix(prefix); err != nil {
			yield(Attrs{}, err)
			return
		}
		for a, err := range p.inner.List(ctx, p.prefix+prefix) {
			if err != nil {
				yield(Attrs{}, p.strip(err))
				return
			}
			a.Key = strings.TrimPrefix(a.Key, p.prefix)
			if !yield(a, nil) {
				return
			}
		}
	}
}

func (p *prefixStore) Put(ctx context.Context, key string, data []byte, c Cond) (Version, error) {
	k, err := p.full("put", key)
	if err != nil {
		return "", err
	}
	v, err := p.inner.Put(ctx, k, data, c)
	return v, p.strip(err)
}

func (p *prefixStore) PutStream(ctx context.Context, key string, r io.Reader, c Cond) (Version, error) {
	k, err := p.full("put", key)
	if err != nil {
		return "", err
	}
	v, err := p.inner.PutStream(ctx, k, r, c)
	return v, p.strip(err)
}

func (p *prefixStore) GetStream(ctx context.Context, key string) (io.ReadCloser, Attrs, error) {
	k, err := p.full("get", key)
	if err != nil {
		return nil, Attrs{}, err
	}
	rc, a, err := p.inner.GetStream(ctx, k)
	a.Key = key
	return rc, a, p.strip(err)
}

func (p *prefixStore) Delete(ctx context.Context, key string, c Cond) error {
	k, err := p.full("delete", key)
	if err != nil {
		return err
	}
	return p.strip(p.inner.Delete(ctx, k, c))
}

func (p *prefixStore) Close() error { return Close(p.inner) }

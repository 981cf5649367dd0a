package gateway

import (
	"context"
	"io"
	"iter"
)

// Op names a store operation.
type Op string

const (
	OpGet    Op = "get"
	OpStat   Op = "stat"
	OpList   Op = "list"
	OpPut    Op = "put"
	OpDelete Op = "delete"
)

// Mutates reports whether op changes the store.
func (o Op) Mutates() bool { return o == OpPut || o == OpDelete }

// Call describes one store request as an interceptor sees it.
type Call struct {
	Op     Op
	Key    string // the key, or the prefix for OpList
	Cond   Cond   // for OpPut and OpDelete
	Size   int64  // bytes for OpPut; -1 when streamed
	Stream bool   // PutStream or GetStream
}

// Interceptor runs around one store request: it may refuse the call, delay
// it, observe its outcome, or replace its error. It must call next at most
// once; next performs the request and returns its error.
type Interceptor func(ctx context.Context, c Call, next func(context.Context) error) error

// Intercept returns a Store that routes every request of s through f. The
// metrics, fault-injection and authorization decorators are interceptors,
// so a new cross-cutting concern touches one place, not every method.
func Intercept(s Store, f Interceptor) Store { return &intercepted{inner: s, f: f} }

type intercepted struct {
	inner Store
	f     Interceptor
}

func (s *intercepted) Get(ctx context.Context, key string) (b []byte, v Version, err error) {
	err = s.f(ctx, Call{Op: OpGet, Key: key}, func(ctx context.Context) error {
		b, v, err = s.inner.Get(ctx, key)
		return err
	})
	return b, v, err
}

func (s *intercepted) Stat(ctx context.Context, key string) (a Attrs, err error) {
	err = s.f(ctx, Call{Op: OpStat, Key: key}, func(ctx context.Context) error {
		a, err = s.inner.Stat(ctx, key)
		return err
	})
	return a, err
}

func (s *intercepted) List(ctx context.Context, prefix string) iter.Seq2[Attrs, error] {
	return func(yield func(Attrs, error) bool) {
		stopped := false
		err := s.f(ctx, Call{Op: OpList, Key: prefix}, func(ctx context.Context) error {
			for a, err := range s.inner.List(ctx, prefix) {
				if err != nil {
					return err
				}
				if !yield(a, nil) {
					stopped = true
					return nil
				}
			}
			return nil
		})
		if err != nil && !stopped {
			yield(Attrs{}, err)
		}
	}
}

func (s *intercepted) Put(ctx context.Context, key string, data []byte, c Cond) (v Version, err error) {
	err = s.f(ctx, Call{Op: OpPut, Key: key, Cond: c, Size: int64(len(data))}, func(ctx context.Context) error {
		v, err = s.inner.Put(ctx, key, data, c)
		return err
	})
	return v, err
}

func (s *intercepted) PutStream(ctx context.Context, key string, r io.Reader, c Cond) (v Version, err error) {
	err = s.f(ctx, Call{Op: OpPut, Key: key, Cond: c, Size: -1, Stream: true}, func(ctx context.Context) error {
		v, err = s.inner.PutStream(ctx, key, r, c)
		return err
	})
	return v, err
}

func (s *intercepted) GetStream(ctx context.Context, key string) (rc io.ReadCloser, a Attrs, err error) {
	err = s.f(ctx, Call{Op: OpGet, Key: key, Stream: true}, func(ctx context.Context) error {
		rc, a, err = s.inner.GetStream(ctx, key)
		return err
	})
	return rc, a, err
}

func (s *intercepted) Delete(ctx context.Context, key string, c Cond) error {
	return s.f(ctx, Call{Op: OpDelete, Key: key, Cond: c}, func(ctx context.Context) error {
		return s.inner.Delete(ctx, key, c)
	})
}

func (s *intercepted) Close() error { return Close(s.inner) }

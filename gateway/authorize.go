package gateway

import (
	"context"
	"errors"
	"io"
	"iter"
)

// Authorizer decides whether a mutation may happen. The policy package
// implements it with OPA; gateway never imports a policy engine.
type Authorizer interface {
	// Authorize returns the condition the write of c must carry, or an
	// error to refuse it. The condition is c.Cond or a stricter one that
	// holds what the decision relied on (IfAbsent when it decided on an
	// absent key, IfMatch(v) when it saw version v), so that a concurrent
	// change fails the write instead of being overwritten. Any error
	// refuses (fail closed); errors that are not already ErrDenied are
	// reported as ErrDenied with the cause kept.
	Authorize(ctx context.Context, c Call) (Cond, error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, c Call) (Cond, error)

// Authorize calls f.
func (f AuthorizerFunc) Authorize(ctx context.Context, c Call) (Cond, error) { return f(ctx, c) }

// WithAuthorizer returns a Store that asks a before every Put and Delete
// and writes with the condition a returns. Reads pass through.
func WithAuthorizer(s Store, a Authorizer) Store { return &authorized{inner: s, a: a} }

type authorized struct {
	inner Store
	a     Authorizer
}

func (s *authorized) decide(ctx context.Context, c Call) (Cond, error) {
	cond, err := s.a.Authorize(ctx, c)
	if errors.Is(err, ErrInvalidKey) {
		return Cond{}, err // refused as the store itself would refuse it
	}
	if errors.Is(err, ErrUnavailable) && !errors.Is(err, ErrDenied) {
		// Refused because the store did not answer while the decision
		// was prepared (policy.DeniedError failing closed on it): no
		// verdict, a store briefly unavailable, to be retried.
		return Cond{}, E(string(c.Op), c.Key, ErrUnavailable, err)
	}
	if err != nil {
		return Cond{}, E(string(c.Op), c.Key, ErrDenied, err)
	}
	return cond, nil
}

func (s *authorized) Get(ctx context.Context, key string) ([]byte, Version, error) {
	return s.inner.Get(ctx, key)
}

func (s *authorized) Stat(ctx context.Context, key string) (Attrs, error) {
	return s.inner.Stat(ctx, key)
}

func (s *authorized) List(ctx context.Context, prefix string) iter.Seq2[Attrs, error] {
	return s.inner.List(ctx, prefix)
}

func (s *authorized) GetStream(ctx context.Context, key string) (io.ReadCloser, Attrs, error) {
	return s.inner.GetStream(ctx, key)
}

func (s *authorized) Put(ctx context.Context, key string, data []byte, c Cond) (Version, error) {
	cond, err := s.decide(ctx, Call{Op: OpPut, Key: key, Cond: c, Size: int64(len(data))})
	if err != nil {
		return "", err
	}
	return s.inner.Put(ctx, key, data, cond)
}

func (s *authorized) PutStream(ctx context.Context, key string, r io.Reader, c Cond) (Version, error) {
	cond, err := s.decide(ctx, Call{Op: OpPut, Key: key, Cond: c, Size: -1, Stream: true})
	if err != nil {
		return "", err
	}
	return s.inner.PutStream(ctx, key, r, cond)
}

func (s *authorized) Delete(ctx context.Context, key string, c Cond) error {
	cond, err := s.decide(ctx, Call{Op: OpDelete, Key: key, Cond: c})
	if err != nil {
		return err
	}
	return s.inner.Delete(ctx, key, cond)
}

func (s *authorized) Close() error { return Close(s.inner) }

func (s *authorized) Unwrap() Store { return s.inner }

// Decide asks the authorizer of s (a store made by WithAuthorizer, as
// policy.Guard returns it) about the write c without making it, so that a
// multi-step write can be refused before its first step. The decision is
// made (and logged) like any other. Any other store, including one that
// wraps an authorized store (a decorator below which keys may differ), is
// not asked here: nil, and its writes are decided when they are made.
func Decide(ctx context.Context, s Store, c Call) error {
	a, ok := s.(*authorized)
	if !ok {
		return nil
	}
	_, err := a.decide(ctx, c)
	return err
}

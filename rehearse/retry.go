package rehearse

import (
	"context"
	"errors"
	"io"
	"iter"

	"github.com/ckgate/ckgate/gateway"
)

// retryStore retries requests that fail with ErrUnavailable, as the cloud
// SDKs' standard retryers do (three attempts), so the store-faults drill
// sees what a job on S3, GCS or Azure sees: most transient failures are
// absorbed, and a retried conditional write whose first attempt did land
// comes back as ErrExists or ErrPrecondition, an ambiguity the engine must
// resolve. An injected crash is never retried.
type retryStore struct {
	inner    gateway.Store
	attempts int
}

func withRetry(s gateway.Store, attempts int) gateway.Store {
	return &retryStore{inner: s, attempts: attempts}
}

func (s *retryStore) Unwrap() gateway.Store { return s.inner }
func (s *retryStore) Close() error          { return gateway.Close(s.inner) }

func retryable(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && errors.Is(err, gateway.ErrUnavailable) && !errors.Is(err, gateway.ErrCrashed)
}

func do[T any](ctx context.Context, n int, f func() (T, error)) (T, error) {
	var v T
	var err error
	for range max(1, n) {
		if v, err = f(); !retryable(ctx, err) {
			return v, err
		}
	}
	return v, err
}

func (s *retryStore) Get(ctx context.Context, key string) ([]byte, gateway.Version, error) {
	var ver gateway.Version
	b, err := do(ctx, s.attempts, func() ([]byte, error) {
		b, v, err := s.inner.Get(ctx, key)
		ver = v
		return b, err
	})
	return b, ver, err
}

func (s *retryStore) Stat(ctx context.Context, key string) (gateway.Attrs, error) {
	return do(ctx, s.attempts, func() (gateway.Attrs, error) { return s.inner.Stat(ctx, key) })
}

// List retries a listing that fails before it yielded anything.
func (s *retryStore) List(ctx context.Context, prefix string) iter.Seq2[gateway.Attrs, error] {
	return func(yield func(gateway.Attrs, error) bool) {
		for attempt := 1; ; attempt++ {
			yielded := false
			var failed error
			for a, err := range s.inner.List(ctx, prefix) {
				if err != nil {
					failed = err
					break
				}
				yielded = true
				if !yield(a, nil) {
					return
				}
			}
			if failed == nil {
				return
			}
			if yielded || attempt >= s.attempts || !retryable(ctx, failed) {
				yield(gateway.Attrs{}, failed)
				return
			}
		}
	}
}

func (s *retryStore) Put(ctx context.Context, key string, data []byte, c gateway.Cond) (gateway.Version, error) {
	return do(ctx, s.attempts, func() (gateway.Version, error) { return s.inner.Put(ctx, key, data, c) })
}

// PutStream is not retried: the reader may be consumed.
func (s *retryStore) PutStream(ctx context.Context, key string, r io.Reader, c gateway.Cond) (gateway.Version, error) {
	return s.inner.PutStream(ctx, key, r, c)
}

func (s *retryStore) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	var a gateway.Attrs
	rc, err := do(ctx, s.attempts, func() (io.ReadCloser, error) {
		rc, at, err := s.inner.GetStream(ctx, key)
		a = at
		return rc, err
	})
	return rc, a, err
}

func (s *retryStore) Delete(ctx context.Context, key string, c gateway.Cond) error {
	_, err := do(ctx, s.attempts, func() (struct{}, error) { return struct{}{}, s.inner.Delete(ctx, key, c) })
	return err
}

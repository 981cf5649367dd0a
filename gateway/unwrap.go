package gateway

import (
	"context"
	"fmt"
)

// Wrapper is implemented by decorators: Unwrap returns the wrapped Store.
type Wrapper interface {
	Unwrap() Store
}

// BucketMaker is implemented by backends that can create their bucket,
// container or root directory (for emulators, test setups and `ckgate store mb`).
// MakeBucket must succeed when the bucket already exists and is usable.
type BucketMaker interface {
	MakeBucket(ctx context.Context) error
}

// As walks the Unwrap chain of s and returns the first store that is a T.
func As[T any](s Store) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		w, ok := s.(Wrapper)
		if !ok {
			break
		}
		s = w.Unwrap()
	}
	var zero T
	return zero, false
}

// MakeBucket creates the bucket under s, through any decorators.
func MakeBucket(ctx context.Context, s Store) error {
	m, ok := As[BucketMaker](s)
	if !ok {
		return fmt.Errorf("make bucket: %w: this backend cannot create buckets", ErrUnsupported)
	}
	return m.MakeBucket(ctx)
}

func (p *prefixStore) Unwrap() Store { return p.inner }
func (s *intercepted) Unwrap() Store { return s.inner }

package backendtest

import (
	"context"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// WantMakeBucketTwice fails t unless making the bucket of s, which exists
// already, succeeds again, on s itself and through a gateway.WithPrefix
// decorator: an existing bucket is success.
func WantMakeBucketTwice(t testing.TB, s gateway.Store) {
	t.Helper()
	if err := gateway.MakeBucket(t.Context(), s); err != nil {
		t.Fatalf("second make bucket: %v", err)
	}
	if err := gateway.MakeBucket(t.Context(), gateway.WithPrefix(s, "x")); err != nil {
		t.Fatalf("make bucket through a decorator: %v", err)
	}
}

// BucketLifecycleThroughDecorator finds BucketLifecycle on s through a
// gateway.WithPrefix decorator, as policy's audit finds it on the store it
// opened, and returns the document it reads. It fails t when the method is
// not found or the read fails.
func BucketLifecycleThroughDecorator(t testing.TB, s gateway.Store) []byte {
	t.Helper()
	lr, ok := gateway.As[interface {
		BucketLifecycle(context.Context) ([]byte, error)
	}](gateway.WithPrefix(s, "x"))
	if !ok {
		t.Fatal("BucketLifecycle not found through a decorator")
	}
	b, err := lr.BucketLifecycle(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

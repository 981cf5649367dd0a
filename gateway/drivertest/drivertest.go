// Package drivertest checks a backend driver's optional operations
// (gateway.RangeDriver, PageDriver, CopyDriver) at the driver itself, on
// full (prefixed) names, against the contracts in gateway/driver_optional.go.
// A backend's test calls Run with a constructor of its drivers over a real
// service; Run checks Range, Page and Copy, once without and once under a
// prefix.
package drivertest

import (
	"context"
	"errors"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// kind is the store kind of a driver's error for a request under c: the
// kind it carries, or the driver's classification.
func kind(d gateway.Driver, err error, c gateway.Cond) error {
	if err == nil {
		return nil
	}
	if k := gateway.KindOf(err); k != nil {
		return k
	}
	return d.Kind(err, c)
}

// wantKind reports unless err is of kind want.
func wantKind(t testing.TB, d gateway.Driver, what string, err error, c gateway.Cond, want error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %v", what, want)
		return
	}
	if k := kind(d, err, c); !errors.Is(k, want) {
		t.Errorf("%s: error %q is %v, want %v", what, err, k, want)
	}
}

// wantNames reports unless err is a *gateway.Error naming name: a copy's
// error names src when src is absent or stale, dst otherwise (the Bucket
// names the caller's key from it).
func wantNames(t testing.TB, what string, err error, name string) {
	t.Helper()
	var ge *gateway.Error
	if err != nil && (!errors.As(err, &ge) || ge.Key != name) {
		t.Errorf("%s: error %q does not name %s", what, err, name)
	}
}

// put stores data under name or fails the test.
func put(t testing.TB, d gateway.Driver, name string, data []byte) gateway.Version {
	t.Helper()
	v, err := d.Put(context.Background(), name, data, gateway.None())
	if err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
	return v
}

// pattern returns n bytes that differ at every offset mod 251.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/gateway/storetest"
)

// closingDriver is memstore's driver with resources to release and a
// name limit of its own, as a cloud driver has.
type closingDriver struct {
	gateway.Driver
	limit  int // longest name, prefix included; 0: none
	closed int
}

func (d *closingDriver) Close() error { d.closed++; return nil }

func (d *closingDriver) CheckName(name string) error {
	if d.limit > 0 && len(name) > d.limit {
		return errors.New("name too long with the prefix")
	}
	return nil
}

// TestBucketConformance: the portable layer over a driver with a Close
// and a name limit passes the whole suite, raw and prefixed.
func TestBucketConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) gateway.Store {
		return gateway.NewBucket(&closingDriver{Driver: memstore.New().Driver()}, "")
	})
}

// TestBucketClosedGuard: after Close, every call of the bucket and of its
// prefixed views fails as unavailable without reaching the driver, and the
// driver is closed once.
func TestBucketClosedGuard(t *testing.T) {
	ctx := context.Background()
	d := &closingDriver{Driver: memstore.New().Driver()}
	b := gateway.NewBucket(d, "")
	view := gateway.WithPrefix(b, "q1")
	if _, err := view.Put(ctx, "k", []byte("x"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if err := gateway.Close(view); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil || d.closed != 1 {
		t.Fatalf("second close: %v, driver closed %d times, want 1", err, d.closed)
	}
	for name, err := range map[string]error{
		"put":    func() error { _, err := b.Put(ctx, "k2", nil, gateway.IfAbsent()); return err }(),
		"get":    func() error { _, _, err := view.Get(ctx, "k"); return err }(),
		"delete": b.Delete(ctx, "q1/k", gateway.None()),
	} {
		if !errors.Is(err, gateway.ErrClosed) {
			t.Errorf("%s after close: %v, want ErrClosed", name, err)
		}
		storetest.WantKind(t, name+" after close", err, gateway.ErrUnavailable)
	}
	if _, _, err := d.Driver.Get(ctx, "q1/k"); err != nil {
		t.Fatalf("the object was lost: %v", err)
	}
}

// TestBucketPrefixAndNames: a bucket's prefix is applied once, its errors
// name the caller's key, and the driver's name limit counts the prefix.
func TestBucketPrefixAndNames(t *testing.T) {
	ctx := context.Background()
	d := &closingDriver{Driver: memstore.New().Driver(), limit: 20}
	b := gateway.NewBucket(d, "/team/")
	s := gateway.WithPrefix(b, "q1/")
	if got := s.(*gateway.Bucket).Prefix(); got != "team/q1/" {
		t.Fatalf("prefix %q, want team/q1/", got)
	}
	if _, err := s.Put(ctx, "offsets/0", []byte("v1"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Driver.Get(ctx, "team/q1/offsets/0"); err != nil {
		t.Fatalf("the driver does not hold team/q1/offsets/0: %v", err)
	}
	_, err := s.Put(ctx, "offsets/0", []byte("v2"), gateway.IfAbsent())
	storetest.WantKeyKind(t, "second create", err, "offsets/0", gateway.ErrExists)
	if strings.Contains(err.Error(), "team/") {
		t.Errorf("error %q names the driver's name, not the caller's key", err)
	}
	_, err = s.Stat(ctx, "offsets/00000000001")
	storetest.WantKeyKind(t, "a key too long with the prefix", err, "offsets/00000000001", gateway.ErrInvalidKey)
	for a, err := range s.List(ctx, "off") {
		if err != nil || a.Key != "offsets/0" {
			t.Fatalf("list = %+v, %v", a, err)
		}
	}
}

package policy_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/policy"
)

// TestRootOwnerClaimedOnce: the first job principal to write under a root
// (or its metadata) owns it; another job principal is refused by CKG-P014;
// a corrupt owner record fails closed naming the record.
func TestRootOwnerClaimedOnce(t *testing.T) {
	ctx := context.Background()
	e := engine(t, policy.Options{})
	raw := memstore.New()
	guard := func(id string) gateway.Store {
		a := policy.NewAuthorizer(e, policy.Principal{ID: id, Kind: policy.KindJob}, "s3://bucket", policy.Facts{}, nil,
			policy.WithWriterSession(), policy.WithExists(raw), policy.WithRootOwners(),
			policy.WithRoots(policy.NewRootFinder("s3://bucket", raw)))
		return gateway.WithAuthorizer(raw, a)
	}
	a, b := guard("job-a"), guard("job-b")
	if _, err := a.Put(ctx, "q1/metadata", []byte(`{"id":"q1"}`), gateway.IfAbsent()); err != nil {
		t.Fatalf("first metadata: %v", err)
	}
	if _, err := b.Put(ctx, "q1/state/0/0/1.delta", []byte("x"), gateway.None()); !errors.Is(err, gateway.ErrDenied) || !strings.Contains(err.Error(), "CKG-P014") || !strings.Contains(err.Error(), "job-a") {
		t.Fatalf("second principal: %v, want CKG-P014 naming job-a", err)
	}
	if _, err := a.Put(ctx, "q1/state/0/0/1.delta", []byte("x"), gateway.None()); err != nil {
		t.Fatalf("owner: %v", err)
	}
	// A root with no record (written before the front door) goes to the first writer.
	if _, err := raw.Put(ctx, "old/metadata", []byte(`{"id":"old"}`), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "old/offsets/.0.tmp", []byte("x"), gateway.None()); err != nil {
		t.Fatalf("first writer of an unowned root: %v", err)
	}
	if _, err := a.Put(ctx, "old/offsets/.1.tmp", []byte("x"), gateway.None()); !errors.Is(err, gateway.ErrDenied) {
		t.Fatalf("second writer of old/: %v, want refused", err)
	}
	// A corrupt record: refused, naming it.
	if _, err := raw.Put(ctx, "bad/metadata", []byte(`{}`), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Put(ctx, "bad/_ckgate/root-owner", []byte("garbage"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(ctx, "bad/state/x", []byte("x"), gateway.None()); !errors.Is(err, gateway.ErrDenied) || !strings.Contains(err.Error(), "bad/_ckgate/root-owner") {
		t.Fatalf("corrupt record: %v, want refused naming bad/_ckgate/root-owner", err)
	}
}

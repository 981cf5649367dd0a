package gateway_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

type denyKey string

func (d denyKey) Authorize(_ context.Context, c gateway.Call) (gateway.Cond, error) {
	if c.Key == string(d) {
		return gateway.Cond{}, errors.New("no " + c.Key)
	}
	return c.Cond, nil
}

// Decide asks the store's authorizer without writing; a store that is not
// an authorized one is not asked.
func TestDecide(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	s := gateway.WithAuthorizer(gateway.WithPrefix(ms, "p/"), denyKey("metadata"))
	if err := gateway.Decide(ctx, s, gateway.Call{Op: gateway.OpPut, Key: "metadata", Cond: gateway.IfAbsent()}); !errors.Is(err, gateway.ErrDenied) {
		t.Fatalf("denied key: %v", err)
	}
	if err := gateway.Decide(ctx, s, gateway.Call{Op: gateway.OpPut, Key: "offsets/0", Cond: gateway.IfAbsent()}); err != nil {
		t.Fatalf("allowed key: %v", err)
	}
	for a, err := range ms.List(ctx, "") {
		t.Fatalf("Decide wrote %s (%v)", a.Key, err)
	}
	if err := gateway.Decide(ctx, ms, gateway.Call{Op: gateway.OpPut, Key: "metadata"}); err != nil {
		t.Fatalf("no authorizer: %v", err)
	}
}

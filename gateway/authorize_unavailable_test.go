package gateway_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/policy"
)

// TestAuthorizerUnavailableIsNoVerdict: a refusal because the store did not
// answer while the decision was prepared (the policy engine failing closed
// on ErrUnavailable, as under wire faults) is ErrUnavailable, to be
// retried, not ErrDenied; a verdict stays ErrDenied.
func TestAuthorizerUnavailableIsNoVerdict(t *testing.T) {
	ctx := context.Background()
	failClosed := &policy.DeniedError{Action: "put", Path: "offsets/3",
		Violations: []policy.Violation{{ID: policy.RuleFailClosed, Name: "fail-closed", Severity: "deny"}},
		Err:        gateway.E("list", "commits/", gateway.ErrUnavailable, errors.New("unexpected EOF"))}
	verdict := &policy.DeniedError{Action: "put", Path: "offsets/3", Violations: []policy.Violation{{ID: "CKG-P001", Severity: "deny"}}}
	for _, tc := range []struct {
		name        string
		err         error
		want, never error
	}{
		{"fail closed on an unavailable store", failClosed, gateway.ErrUnavailable, gateway.ErrDenied},
		{"a policy verdict", verdict, gateway.ErrDenied, gateway.ErrUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := gateway.WithAuthorizer(memstore.New(), gateway.AuthorizerFunc(func(context.Context, gateway.Call) (gateway.Cond, error) {
				return gateway.Cond{}, tc.err
			}))
			_, err := st.Put(ctx, "offsets/3", []byte("x"), gateway.IfAbsent())
			if !errors.Is(err, tc.want) || errors.Is(err, tc.never) || gateway.KindOf(err) != tc.want {
				t.Fatalf("Put = %v (kind %v), want kind %v and never %v", err, gateway.KindOf(err), tc.want, tc.never)
			}
		})
	}
}

package policy

import (
	"context"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ckgate/ckgate/gateway"
)

// testInput is the input a's Authorize builds for c.
func (a *Authorizer) testInput(ctx context.Context, c gateway.Call) (ast.Object, callShape) {
	loc, roots, err := a.locate(ctx, c.Key)
	if err != nil { // a key the store refuses: decided as it is spelled
		loc, roots = JoinPath(a.base, c.Key), nil
		if a.scope != "" && gateway.InsideLocation(loc, a.scope) {
			roots = []string{a.scope}
		}
	}
	_, in, shape, err := a.gather(ctx, c, loc, roots)
	if err != nil {
		panic(err)
	}
	return in, shape
}

// check is Authorize for the tests that only look at the refusal.
func (a *Authorizer) check(ctx context.Context, c gateway.Call) error {
	_, err := a.Authorize(ctx, c)
	return err
}

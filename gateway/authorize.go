package gateway

import "context"

// Authorizer decides whether a mutation may happen. The policy package
// implements it with OPA; gateway never imports a policy engine.
type Authorizer interface {
	// Authorize returns nil to allow c, or an error to refuse it. Any error
	// refuses (fail closed); errors that are not already ErrDenied are
	// reported as ErrDenied with the cause kept.
	Authorize(ctx context.Context, c Call) error
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, c Call) error

// Authorize calls f.
func (f AuthorizerFunc) Authorize(ctx context.Context, c Call) error { return f(ctx, c) }

// WithAuthorizer returns a Store that asks a before every Put and Delete.
// Reads pass through.
func WithAuthorizer(s Store, a Authorizer) Store {
	return Intercept(s, func(ctx context.Context, c Call, next func(context.Context) error) error {
		if !c.Op.Mutates() {
			return next(ctx)
		}
		if err := a.Authorize(ctx, c); err != nil {
			return E(string(c.Op), c.Key, ErrDenied, err)
		}
		return next(ctx)
	})
}

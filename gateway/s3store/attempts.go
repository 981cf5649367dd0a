package s3store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
)

// tracker watches the attempts of one SDK call: the SDK retries inside a
// call (timeouts, 5xx, throttling), so a create-only PUT whose first attempt
// was applied but timed out comes back as 412 from the retry. The backend
// must know that to tell its own earlier write from a lost race.
//
// A tracker also marks errors raised while obtaining credentials, which the
// SDK reports as plain wrapped errors, so they classify as ErrPermission.
//
// One tracker serves one call at a time; the SDK runs its attempts
// sequentially.
type tracker struct {
	attempts  int
	ambiguous bool // an attempt ended without a 4xx answer: it may have been applied
	identity  bool // the current attempt got past credential resolution
}

// option installs the tracker's middleware for one call.
func (t *tracker) option(o *s3.Options) {
	o.APIOptions = append(o.APIOptions, t.register)
}

func (t *tracker) register(stack *middleware.Stack) error {
	// "Retry" runs the attempt loop; what is inserted after it runs once
	// per attempt. "GetIdentity" resolves credentials inside each attempt.
	if err := stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("ckgate.Attempt", t.attempt), "Retry", middleware.After); err != nil {
		return err
	}
	if err := stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("ckgate.Credentials", t.credentials), "GetIdentity", middleware.Before); err != nil {
		return err
	}
	return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("ckgate.Identified", t.identified), "GetIdentity", middleware.After)
}

func (t *tracker) attempt(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	t.attempts++
	out, md, err := next.HandleFinalize(ctx, in)
	if err != nil {
		var ce *credentialsError
		status := httpStatus(err)
		definite := status >= 400 && status < 500 || errors.As(err, &ce)
		if !definite {
			// No answer or a 5xx: the service may have applied it.
			t.ambiguous = true
		}
	}
	return out, md, err
}

func (t *tracker) credentials(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	t.identity = false
	out, md, err := next.HandleFinalize(ctx, in)
	if err != nil && !t.identity && ctx.Err() == nil &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		err = &credentialsError{err: err}
	}
	return out, md, err
}

func (t *tracker) identified(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	t.identity = true
	return next.HandleFinalize(ctx, in)
}

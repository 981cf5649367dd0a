package gcsstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/storage"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	"github.com/ckgate/ckgate/gateway"
)

// wrap turns a library error for key into a *gateway.Error of the right
// kind, keeping err reachable (for what gateway.Bucket does not wrap:
// bucket-level calls).
func wrap(ctx context.Context, op, key string, c gateway.Cond, err error) error {
	err = named(ctx, err)
	return gateway.E(op, key, kindOf(c, err), err)
}

// named names a cancelled or expired ctx in err's chain even when the
// library reported something else.
func named(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%w)", err, cerr)
	}
	return err
}

// kindOf maps a library error to a gateway error kind. c is the condition
// the request carried: a 412 means ErrExists for IfAbsent and
// ErrPrecondition otherwise.
func kindOf(c gateway.Cond, err error) error {
	if k := statusKind(c, err); k != nil {
		return k
	}
	switch {
	case errors.Is(err, storage.ErrObjectNotExist), errors.Is(err, storage.ErrBucketNotExist):
		return gateway.ErrNotFound
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return gateway.ErrUnavailable
	}
	// Refused credentials (token endpoint answered 4xx).
	var ae *auth.Error
	if errors.As(err, &ae) && ae.Response != nil {
		return httpKind(c, ae.Response.StatusCode, gateway.ErrPermission)
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		return httpKind(c, re.Response.StatusCode, gateway.ErrPermission)
	}
	// Anything else is a transport or library failure: retryable.
	return gateway.ErrUnavailable
}

// statusKind maps an HTTP status carried by a *googleapi.Error.
func statusKind(c gateway.Cond, err error) error {
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code == 0 {
		return nil
	}
	return httpKind(c, ge.Code, gateway.ErrUnsupported)
}

// httpKind maps an HTTP status with gateway.StatusKind; other4xx is the
// kind of the 4xx statuses with no meaning of their own (a token endpoint's
// 400 is refused credentials).
func httpKind(c gateway.Cond, code int, other4xx error) error {
	k := gateway.StatusKind(code, c)
	switch {
	case k == nil:
		return gateway.ErrUnavailable
	case k == gateway.ErrUnsupported && code != http.StatusNotImplemented:
		return other4xx
	}
	return k
}

func isPrecondition(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusPreconditionFailed
}

func isNotFound(err error) bool {
	var ge *googleapi.Error
	return errors.Is(err, storage.ErrObjectNotExist) || (errors.As(err, &ge) && ge.Code == http.StatusNotFound)
}

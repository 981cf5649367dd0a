package gateway

import (
	"context"
	"fmt"
)

// Refused is a conditional write (IfAbsent or IfMatch) the store refused.
// The refusal may be the caller's own write seen again: the SDK's retry of
// an attempt that the service applied before it timed out, or the same
// request delivered twice on the way. Every backend writes a fresh write id
// into the object's metadata and settles a refusal with Settle.
type Refused struct {
	Op, Key string
	Cond    Cond
	// Err is the store's refusal; it stays the cause of the error.
	Err error
	// Retried says an earlier attempt of this write may have been applied
	// (the SDK retried it, or it timed out).
	Retried bool
}

// Settle decides a refused write by reading the key back with mine, which
// returns the stored version and whether it carries this write's id, and
// missing, which says whether mine's error means the key is absent. It is
// the one answer to the ambiguous conditional write, on every backend:
//
//   - the stored object is this write's: success, with its version;
//   - the read-back fails (other than absent) after a retried attempt: the
//     outcome is unknown, ErrUnknownOutcome, never the retryable
//     ErrUnavailable, after which a retried create would see ErrExists for
//     its own write;
//   - otherwise the refusal stands: ErrExists for IfAbsent, ErrPrecondition
//     for IfMatch.
//
// A nil mine (a backend that has no write id to compare and saw no retry)
// lets the refusal stand.
func (r Refused) Settle(ctx context.Context, mine func(context.Context) (Version, bool, error), missing func(error) bool) (Version, error) {
	if mine != nil {
		v, ok, err := mine(ctx)
		switch {
		case err == nil && ok:
			return v, nil
		case err != nil && !missing(err) && r.Retried:
			return "", E(r.Op, r.Key, ErrUnknownOutcome,
				fmt.Errorf("a retried write was refused (%w), and reading the key back to resolve it failed: %w", r.Err, err))
		}
	}
	return "", E(r.Op, r.Key, r.Lost(), r.Err)
}

// Lost is the kind of the refusal when it stands: ErrExists for IfAbsent,
// ErrPrecondition otherwise.
func (r Refused) Lost() error {
	if r.Cond.Kind == CondIfAbsent {
		return ErrExists
	}
	return ErrPrecondition
}

package gateway

import (
	"context"
	"fmt"
	"net/url"
	"time"
)

// TryTimeoutParam is the store URL query parameter (s3://, gs://, az://)
// that bounds each attempt of each request the cloud SDK sends, body
// included: an attempt that takes longer is abandoned and retried by the
// SDK's own retryer. None of the SDKs has one by default, so a server that
// accepted a request and never answers would hold the call for as long as
// the caller's context allows. Set it above the time the largest object
// (or multipart part) takes to move.
const TryTimeoutParam = "try_timeout"

// Bounds of TryTimeoutParam.
const (
	MinTryTimeout = 100 * time.Millisecond
	MaxTryTimeout = time.Hour
)

type tryTimeoutKey struct{}

// WithTryTimeout returns ctx carrying the per-try timeout d for the
// openers of cloud stores (see TryTimeout).
func WithTryTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, tryTimeoutKey{}, d)
}

// TryTimeout is the per-try timeout a backend's opener sets on the SDK
// client it builds (0: the SDK's default, none).
func TryTimeout(ctx context.Context) time.Duration {
	d, _ := ctx.Value(tryTimeoutKey{}).(time.Duration)
	return d
}

// TakeTryTimeout removes TryTimeoutParam from u's query and returns it
// (the registry's Open does; so does anything else that opens a backend by
// URL). The local disk takes none: it is refused there.
func TakeTryTimeout(u *url.URL) (*url.URL, time.Duration, error) {
	if u.RawQuery == "" {
		return u, 0, nil
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil || !q.Has(TryTimeoutParam) {
		return u, 0, nil // the backend reports a bad query
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s %s", ErrInvalidURL, Redact(u.String()), TryTimeoutParam, fmt.Sprintf(format, args...))
	}
	if u.Scheme == "file" {
		return nil, 0, bad("applies to s3://, gs:// and az:// only")
	}
	vals := q[TryTimeoutParam]
	if len(vals) != 1 {
		return nil, 0, bad("given %d times", len(vals))
	}
	d, err := time.ParseDuration(vals[0])
	if err != nil {
		return nil, 0, bad("%q: want a duration such as 5s or 1m", vals[0])
	}
	if d < MinTryTimeout || d > MaxTryTimeout {
		return nil, 0, bad("%q: want %s to %s", vals[0], MinTryTimeout, MaxTryTimeout)
	}
	q.Del(TryTimeoutParam)
	out := *u
	out.RawQuery = q.Encode()
	return &out, d, nil
}

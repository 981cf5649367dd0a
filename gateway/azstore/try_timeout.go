package azstore

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/ckgate/ckgate/gateway"
)

// withTryTimeout sets the per-try timeout of ctx (the URL's try_timeout,
// see gateway.TryTimeoutParam) as the pipeline's Retry.TryTimeout, which
// azcore leaves off by default; the retry policy retries a timed-out try.
func withTryTimeout(ctx context.Context, opts *container.ClientOptions) *container.ClientOptions {
	if d := gateway.TryTimeout(ctx); d > 0 {
		opts.Retry.TryTimeout = d
	}
	return opts
}

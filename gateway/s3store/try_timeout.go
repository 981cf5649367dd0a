package s3store

import (
	"context"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/ckgate/ckgate/gateway"
)

// tryTimeoutOptions sets the per-try timeout of ctx (the URL's try_timeout,
// see gateway.TryTimeoutParam) on the SDK's HTTP client: each attempt,
// body included, is bounded, and the SDK's retryer retries a timed-out one.
func tryTimeoutOptions(ctx context.Context) []func(*config.LoadOptions) error {
	d := gateway.TryTimeout(ctx)
	if d <= 0 {
		return nil
	}
	return []func(*config.LoadOptions) error{config.WithHTTPClient(awshttp.NewBuildableClient().WithTimeout(d))}
}

package s3store

import (
	"context"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/ckgate/ckgate/gateway"
)

// maxIdleConnsPerHost is how many idle connections to its endpoint a store
// keeps for the next requests. The SDK's default keeps 10: a front door
// (ckgate serve) with more requests than that in flight to one endpoint
// closed every connection beyond the tenth as its request ended, and
// dialled (over TLS, shook hands) again for the next one.
const maxIdleConnsPerHost = 256

// httpClient is the SDK's HTTP client keeping maxIdleConnsPerHost idle
// connections, with the per-try timeout of ctx (the URL's try_timeout, see
// gateway.TryTimeoutParam) when it has one: each attempt, body included,
// is bounded, and the SDK's retryer retries a timed-out one.
func httpClient(ctx context.Context) *awshttp.BuildableClient {
	c := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns, t.MaxIdleConnsPerHost = maxIdleConnsPerHost, maxIdleConnsPerHost
	})
	if d := gateway.TryTimeout(ctx); d > 0 {
		c = c.WithTimeout(d)
	}
	return c
}

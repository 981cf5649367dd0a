package azstore

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// ClientOptions returns the client options Open builds its clients with. A
// client passed to New should be built with them (set Transport, Retry and
// the rest on the result): they install the per-try policy that lets the
// store tell its own retried conditional write from a lost race.
func ClientOptions() *container.ClientOptions {
	o := &container.ClientOptions{}
	o.Telemetry.ApplicationID = "ckgate"
	o.PerRetryPolicies = append(o.PerRetryPolicies, triesPolicy{})
	return o
}

type triesKey struct{}

// tries counts the attempts the pipeline made for one call.
type tries struct{ n atomic.Int32 }

// withTries returns ctx carrying a fresh attempt counter.
func withTries(ctx context.Context) (context.Context, *tries) {
	t := &tries{}
	return context.WithValue(ctx, triesKey{}, t), t
}

// retried reports whether the pipeline sent the request more than once, so
// that an earlier attempt may have been applied by the service.
func (t *tries) retried() bool { return t.n.Load() > 1 }

// triesPolicy runs once per attempt (it sits inside the retry loop) and
// counts the attempts of calls that carry a counter.
type triesPolicy struct{}

func (triesPolicy) Do(req *policy.Request) (*http.Response, error) {
	if t, ok := req.Raw().Context().Value(triesKey{}).(*tries); ok {
		t.n.Add(1)
	}
	return req.Next()
}

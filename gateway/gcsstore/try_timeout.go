package gcsstore

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"

	"github.com/ckgate/ckgate/gateway"
)

// ClientOptions returns the client options cfg asks for (credentials,
// endpoint; with STORAGE_EMULATOR_HOST set, credentials_file and
// impersonate are refused) and the per-try timeout of ctx.
func (cfg Config) ClientOptions(ctx context.Context) ([]option.ClientOption, error) {
	opts, err := cfg.clientOptions(ctx)
	if err != nil {
		return nil, err
	}
	return withTryTimeout(ctx, cfg.Bucket, opts)
}

// withTryTimeout adds to opts an HTTP client whose attempts are bounded by
// the per-try timeout of ctx (the URL's try_timeout, see
// gateway.TryTimeoutParam), body included; the library's retryer retries a
// timed-out attempt. The client carries the credentials opts name; with
// STORAGE_EMULATOR_HOST set it carries none, as the library does.
func withTryTimeout(ctx context.Context, bucket string, opts []option.ClientOption) ([]option.ClientOption, error) {
	d := gateway.TryTimeout(ctx)
	if d <= 0 {
		return opts, nil
	}
	if os.Getenv(EmulatorHostEnv) != "" {
		return append(opts, option.WithHTTPClient(&http.Client{Timeout: d})), nil
	}
	scoped := append([]option.ClientOption{option.WithScopes(storage.ScopeFullControl, "https://www.googleapis.com/auth/cloud-platform")}, opts...)
	hc, _, err := htransport.NewClient(ctx, scoped...)
	if err != nil {
		return nil, fmt.Errorf("gs://%s: HTTP client for %s: %w", bucket, gateway.TryTimeoutParam, err)
	}
	hc.Timeout = d
	return append(opts, option.WithHTTPClient(hc)), nil
}

package azstore

import (
	"context"
	"net/url"
)

// OpenEnv is Open with the environment read through getenv rather than
// os.Getenv, so that a caller can put credentials given on its command
// line in front of the environment (ckgate validate-access does, for its
// --azure-connection-string and --azure-sas flags). Store.Auth tells which
// method won. Like Open, it makes no request.
func OpenEnv(ctx context.Context, u *url.URL, getenv func(string) string) (*Store, error) {
	return open(ctx, u, getenv, ClientOptions())
}

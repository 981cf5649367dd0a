package azstore_test

import (
	"context"
	"net/url"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/azstore"
)

// Open a checkpoint root in a container, with the credentials of the
// environment (here: AZURE_STORAGE_KEY or DefaultAzureCredential), and
// write a log entry create-only.
func ExampleOpen() {
	ctx := context.Background()
	u, _ := url.Parse("az://myaccount/checkpoints/team/query-1")
	s, err := azstore.Open(ctx, u)
	if err != nil {
		return // e.g. a forced auth= method without its variable
	}
	defer gateway.Close(s)
	if _, err := s.Put(ctx, "offsets/0", []byte("v1\n{}"), gateway.IfAbsent()); err != nil {
		// errors.Is(err, gateway.ErrExists): another writer got there first.
		return
	}
}

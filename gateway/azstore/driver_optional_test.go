package azstore

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/drivertest"
)

// listCounter counts the List Blobs requests a client sends.
type listCounter struct{ n atomic.Int64 }

func (c *listCounter) Do(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && r.URL.Query().Get("comp") == "list" {
		c.n.Add(1)
	}
	return http.DefaultClient.Do(r)
}

// The driver's ranged reads, pages and copies, raw and under a prefix.
func TestDriverOptional(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) (gateway.Driver, func() int64) {
		lc := new(listCounter)
		opts := testClientOptions()
		opts.Transport = lc
		return newStoreWith(t, "", opts).d, lc.n.Load
	}, true)
}

// BenchmarkListPage: a continuation page costs one List Blobs.
func BenchmarkListPage(b *testing.B) {
	var lc listCounter
	opts := testClientOptions()
	opts.Transport = &lc
	drivertest.BenchPage(b, newStoreWith(b, "", opts).d, "azure", lc.n.Load)
}

package azstore

import (
	"net/http"
	"sync/atomic"
	"testing"

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
	for _, prefix := range []string{"", "tenant/q1/"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			var lc listCounter
			opts := testClientOptions()
			opts.Transport = &lc
			t.Run("range", func(t *testing.T) { drivertest.Range(t, newStore(t, "").d, prefix) })
			t.Run("page", func(t *testing.T) { drivertest.Page(t, newStoreWith(t, "", opts).d, prefix, lc.n.Load, true) })
			t.Run("copy", func(t *testing.T) { drivertest.Copy(t, newStore(t, "").d, prefix) })
		})
	}
}

// BenchmarkListPage: a continuation page costs one List Blobs.
func BenchmarkListPage(b *testing.B) {
	var lc listCounter
	opts := testClientOptions()
	opts.Transport = &lc
	drivertest.BenchPage(b, newStoreWith(b, "", opts).d, "azure", lc.n.Load)
}

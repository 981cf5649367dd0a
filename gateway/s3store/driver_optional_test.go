package s3store

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway/drivertest"
)

// listCounter counts the ListObjectsV2 requests a client sends.
type listCounter struct{ n atomic.Int64 }

func (c *listCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2" {
		c.n.Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// The driver's ranged reads, pages and copies, raw and under a prefix.
func TestDriverOptional(t *testing.T) {
	for _, prefix := range []string{"", "tenant/q1/"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			var lc listCounter
			client := newClient(t, func(o *s3.Options) { o.HTTPClient = &http.Client{Transport: &lc} })
			t.Run("range", func(t *testing.T) { drivertest.Range(t, newStoreOn(t, client, "").d, prefix) })
			t.Run("page", func(t *testing.T) { drivertest.Page(t, newStoreOn(t, client, "").d, prefix, lc.n.Load, false) })
			t.Run("copy", func(t *testing.T) { drivertest.Copy(t, newStoreOn(t, client, "").d, prefix) })
		})
	}
}

// BenchmarkListPage: a continuation page costs one ListObjectsV2.
func BenchmarkListPage(b *testing.B) {
	var lc listCounter
	s := newStoreOn(b, newClient(b, func(o *s3.Options) { o.HTTPClient = &http.Client{Transport: &lc} }), "")
	drivertest.BenchPage(b, s.d, "s3", lc.n.Load)
}

package s3store

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/gateway"
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
	drivertest.Run(t, func(t *testing.T) (gateway.Driver, func() int64) {
		lc := new(listCounter)
		s := newStoreOn(t, newClient(t, func(o *s3.Options) { o.HTTPClient = &http.Client{Transport: lc} }), "")
		return s.d, lc.n.Load
	}, false)
}

// BenchmarkListPage: a continuation page costs one ListObjectsV2.
func BenchmarkListPage(b *testing.B) {
	var lc listCounter
	s := newStoreOn(b, newClient(b, func(o *s3.Options) { o.HTTPClient = &http.Client{Transport: &lc} }), "")
	drivertest.BenchPage(b, s.d, "s3", lc.n.Load)
}

package gcsstore

import (
	"net/http"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/drivertest"
)

// The driver's ranged reads, pages and copies, raw and under a prefix.
func TestDriverOptional(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) (gateway.Driver, func() int64) {
		lc := &listCounter{base: http.DefaultTransport}
		s := newStoreOn(t, newClient(t, lc), "")
		return s.d, func() int64 { return int64(lc.lists.Load()) }
	}, false)
}

// BenchmarkListPage: a continuation page costs one objects.list.
func BenchmarkListPage(b *testing.B) {
	lc := &listCounter{base: http.DefaultTransport}
	s := newStoreOn(b, newClient(b, lc), "")
	drivertest.BenchPage(b, s.d, "gcs", func() int64 { return int64(lc.lists.Load()) })
}

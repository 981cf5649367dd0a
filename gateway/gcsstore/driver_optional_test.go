package gcsstore

import (
	"net/http"
	"testing"

	"github.com/ckgate/ckgate/gateway/drivertest"
)

// The driver's ranged reads, pages and copies, raw and under a prefix.
func TestDriverOptional(t *testing.T) {
	for _, prefix := range []string{"", "tenant/q1/"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			lc := &listCounter{base: http.DefaultTransport}
			client := newClient(t, lc)
			lists := func() int64 { return int64(lc.lists.Load()) }
			t.Run("range", func(t *testing.T) { drivertest.Range(t, newStoreOn(t, client, "").d, prefix) })
			t.Run("page", func(t *testing.T) { drivertest.Page(t, newStoreOn(t, client, "").d, prefix, lists, false) })
			t.Run("copy", func(t *testing.T) { drivertest.Copy(t, newStoreOn(t, client, "").d, prefix) })
		})
	}
}

// BenchmarkListPage: a continuation page costs one objects.list.
func BenchmarkListPage(b *testing.B) {
	lc := &listCounter{base: http.DefaultTransport}
	s := newStoreOn(b, newClient(b, lc), "")
	drivertest.BenchPage(b, s.d, "gcs", func() int64 { return int64(lc.lists.Load()) })
}

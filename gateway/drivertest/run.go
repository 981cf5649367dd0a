package drivertest

import (
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// Run checks Range, Page and Copy, each on a driver of a new, empty bucket
// from open, once on names at the root and once under a prefix. open also
// returns the count of list requests the driver's client has sent (for
// Page); utf16 is Page's.
func Run(t *testing.T, open func(t *testing.T) (d gateway.Driver, lists func() int64), utf16 bool) {
	for _, prefix := range []string{"", "tenant/q1/"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			t.Run("range", func(t *testing.T) {
				d, _ := open(t)
				Range(t, d, prefix)
			})
			t.Run("page", func(t *testing.T) {
				d, lists := open(t)
				Page(t, d, prefix, lists, utf16)
			})
			t.Run("copy", func(t *testing.T) {
				d, _ := open(t)
				Copy(t, d, prefix)
			})
		})
	}
}

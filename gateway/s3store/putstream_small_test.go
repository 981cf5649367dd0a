package s3store

import (
	"testing"

	"github.com/ckgate/ckgate/gateway/backendtest"
)

// TestPutStreamSmallAllocatesItsSize: a 4 KiB PutStream allocates about
// what it sends, not a whole part.
func TestPutStreamSmallAllocatesItsSize(t *testing.T) {
	backendtest.WantSmallPutStreamAllocatesItsSize(t, newStore(t), DefaultPartSize)
}

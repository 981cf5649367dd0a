package azstore

import (
	"testing"

	"github.com/ckgate/ckgate/gateway/backendtest"
)

// TestPutStreamSmallAllocatesItsSize: a 4 KiB PutStream allocates about
// what it sends, not a whole block.
func TestPutStreamSmallAllocatesItsSize(t *testing.T) {
	backendtest.WantSmallPutStreamAllocatesItsSize(t, newStore(t, ""), BlockSize)
}

package azstore

import (
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/storetest"
)

// TestConformance runs the whole suite, raw and behind gateway.WithPrefix,
// on a new container per case, with List pages of 1,000 so that the
// 1,500-key listing crosses pages.
func TestConformance(t *testing.T) {
	requireAzurite(t)
	storetest.Run(t, func(t *testing.T) gateway.Store {
		s := newStore(t, "")
		s.d.pageSize = 1000
		return s
	})
}

// The suite is not run on a store with a backend prefix: its LongKey case
// writes keys of up to MaxKeyLen-len(storetest.Prefix)-1 bytes, and Azure's
// 1,024-character blob name limit counts the backend prefix, so that case
// is refused (ErrInvalidKey) by design. TestBackendPrefix covers the
// backend prefix instead.

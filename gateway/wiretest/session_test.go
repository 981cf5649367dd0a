package wiretest

import (
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/sessiontest"
	"github.com/ckgate/ckgate/internal/faultproxy"
)

// sessionFaults are the kinds mixed into the session suite's requests.
// Delay is left to the conditional-write tests (each costs a try timeout).
var sessionFaults = []faultproxy.Kind{
	faultproxy.DropResponse, faultproxy.ResetBefore, faultproxy.ResetAfter,
	faultproxy.Busy, faultproxy.Internal, faultproxy.Duplicate, faultproxy.CutBody,
}

// TestWireSession runs the session suite (take-over, fencing, zombie
// adoption) with 15% of its requests faulted, each request at most once so
// that the SDK's own retry gets through: the suite's exact outcomes hold.
func TestWireSession(t *testing.T) {
	each(t, func(t *testing.T, c *cloud) {
		seed := uint64(21)
		sessiontest.Run(t, func(t *testing.T) gateway.Store {
			st, p := c.through(t, seed)
			seed++
			p.SetRules(&faultproxy.Rule{Prob: 0.15, Once: true, Faults: sessionFaults})
			t.Cleanup(func() { tally.add(t, p.Events()) })
			return st
		})
	})
}

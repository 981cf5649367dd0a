package wiretest

import (
	"strings"
	"sync"
	"testing"

	"github.com/ckgate/ckgate/internal/faultproxy"
)

// tally counts, per cloud, what the wire tests injected and how the stores
// settled it, for the summary rows (see TestMain's caller, summary_test.go).
var tally = &counts{clouds: map[string]*cloudCounts{}}

type cloudCounts struct {
	requests int
	injected map[faultproxy.Kind]int
	resolved int // ambiguous outcomes resolved to the right answer
	unknown  int // ErrUnknownOutcome returned
}

type counts struct {
	mu     sync.Mutex
	clouds map[string]*cloudCounts
}

// of returns the counts of the cloud t runs on (the second name element).
func (c *counts) of(t *testing.T) *cloudCounts {
	parts := strings.Split(t.Name(), "/")
	name := "?"
	if len(parts) > 1 {
		name = parts[1]
	}
	cc := c.clouds[name]
	if cc == nil {
		cc = &cloudCounts{injected: map[faultproxy.Kind]int{}}
		c.clouds[name] = cc
	}
	return cc
}

func (c *counts) add(t *testing.T, ev []faultproxy.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc := c.of(t)
	for _, e := range ev {
		cc.injected[e.Kind]++
	}
}

func (c *counts) requests(t *testing.T, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.of(t).requests += n
}

// resolved counts an outcome that the fault made ambiguous (the server
// may have applied the write) and the store settled.
func (c *counts) resolved(t *testing.T, kind faultproxy.Kind) {
	switch kind {
	case faultproxy.ResetBefore, faultproxy.Busy, faultproxy.Internal:
		return // not applied: nothing was ambiguous
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.of(t).resolved++
}

func (c *counts) unknown(t *testing.T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.of(t).unknown++
}

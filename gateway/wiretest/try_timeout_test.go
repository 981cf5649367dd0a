package wiretest

import (
	"context"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/faultproxy"
)

// TestWireTryTimeoutURL opens each cloud's store by URL, as the CLI does,
// with try_timeout=1s, and holds the answer to its first object write for a
// minute: the SDK gives that attempt up after a second, retries it, and the
// create resolves to this writer's win well before the held answer would
// have come.
func TestWireTryTimeoutURL(t *testing.T) {
	each(t, func(t *testing.T, c *cloud) {
		p, err := faultproxy.Start(faultproxy.Options{Target: c.target, Provider: c.provider, RewriteHost: c.rewriteHost, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		raw := c.storeURL(t, p.URL(), gateway.TryTimeoutParam+"=1s")
		st, err := stores.Open(t.Context(), raw)
		if err != nil {
			t.Fatalf("open %s: %v", gateway.Redact(raw), err)
		}
		t.Cleanup(func() { gateway.Close(st) })
		if err := gateway.MakeBucket(t.Context(), st); err != nil {
			t.Fatalf("make bucket: %v", err)
		}
		p.SetRules(&faultproxy.Rule{Match: c.isWrite, Nth: 1, Faults: []faultproxy.Kind{faultproxy.Delay}, Delay: time.Minute})
		ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
		defer cancel()
		start := time.Now()
		if _, err := st.Put(ctx, "offsets/0", []byte("v1\n{}\n{}\n"), gateway.IfAbsent()); err != nil {
			t.Fatalf("create-only put with its first answer held a minute: %v (after %s)", err, time.Since(start).Round(time.Millisecond))
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Fatalf("the put took %s: try_timeout=1s was not applied", took)
		}
		if n := p.Counts()[faultproxy.Delay]; n != 1 {
			t.Fatalf("delay faults injected = %d, want 1", n)
		}
		tally.add(t, p.Events())
		tally.resolved(t, faultproxy.Delay)
	})
}

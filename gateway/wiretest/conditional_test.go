package wiretest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/faultproxy"
)

// wirecase is one fault on the first write of a conditional Put.
type wirecase struct {
	name  string
	fault faultproxy.Kind
}

// applied are the faults after which the server holds the write although
// the client saw no answer (or, for Duplicate, the answer of a replay).
var applied = []wirecase{
	{"first response dropped", faultproxy.DropResponse},
	{"reset after forwarding", faultproxy.ResetAfter},
	{"answer delayed past the try timeout", faultproxy.Delay},
	{"request duplicated", faultproxy.Duplicate},
	{"reset before forwarding", faultproxy.ResetBefore},
	{"503 busy", faultproxy.Busy},
	{"500 internal", faultproxy.Internal},
}

// firstWrite faults the first object write only.
func firstWrite(c *cloud, kind faultproxy.Kind) *faultproxy.Rule {
	return &faultproxy.Rule{Match: c.isWrite, Nth: 1, Faults: []faultproxy.Kind{kind}, Delay: 3 * tryTimeout}
}

// wantFired checks that the proxy injected kind exactly once.
func wantFired(t *testing.T, p *faultproxy.Proxy, kind faultproxy.Kind) {
	t.Helper()
	ev := p.Events()
	if len(ev) != 1 || ev[0].Kind != kind {
		t.Fatalf("injected %+v, want one %s", ev, kind)
	}
	tally.add(t, ev)
}

// wantStored checks that key holds data at version v.
func wantStored(t *testing.T, st gateway.Store, key string, data []byte, v gateway.Version) {
	t.Helper()
	got, gv, err := st.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	if !bytes.Equal(got, data) || gv != v {
		t.Fatalf("%s holds %q at %q, want %q at %q", key, got, gv, data, v)
	}
}

// TestWireCreate: a create-only Put whose first request met a fault on the
// wire, retried by the SDK's own retryer, ends as "this writer won" — never
// ErrExists for its own write — and a second writer then loses with
// ErrExists.
func TestWireCreate(t *testing.T) {
	each(t, func(t *testing.T, c *cloud) {
		for _, wc := range applied {
			t.Run(wc.name, func(t *testing.T) {
				st, p := c.through(t, 1)
				p.SetRules(firstWrite(c, wc.fault))
				data := []byte("offsets 7 epoch 3 " + unique(""))
				v, err := st.Put(t.Context(), "offsets/7", data, gateway.IfAbsent())
				if err != nil {
					t.Fatalf("create after %s: %v (want: this writer won)", wc.fault, err)
				}
				wantFired(t, p, wc.fault)
				tally.resolved(t, wc.fault)
				wantStored(t, st, "offsets/7", data, v)
				_, err = st.Put(t.Context(), "offsets/7", []byte("a second writer"), gateway.IfAbsent())
				if !errors.Is(err, gateway.ErrExists) {
					t.Fatalf("second create: %v, want ErrExists", err)
				}
				wantStored(t, st, "offsets/7", data, v)
			})
		}
	})
}

// TestWireCAS: a compare-and-swap whose first request met a fault ends as
// "this writer won"; the old version is then stale.
func TestWireCAS(t *testing.T) {
	each(t, func(t *testing.T, c *cloud) {
		for _, wc := range applied {
			t.Run(wc.name, func(t *testing.T) {
				st, p := c.through(t, 2)
				v1, err := st.Put(t.Context(), gateway.WriterKey, []byte("epoch=1 "+unique("")), gateway.IfAbsent())
				if err != nil {
					t.Fatal(err)
				}
				p.SetRules(firstWrite(c, wc.fault))
				data := []byte("epoch=2 " + unique(""))
				v2, err := st.Put(t.Context(), gateway.WriterKey, data, gateway.IfMatch(v1))
				if err != nil {
					t.Fatalf("CAS after %s: %v (want: this writer won)", wc.fault, err)
				}
				wantFired(t, p, wc.fault)
				tally.resolved(t, wc.fault)
				if v2 == v1 {
					t.Fatalf("CAS kept version %q", v1)
				}
				wantStored(t, st, gateway.WriterKey, data, v2)
				_, err = st.Put(t.Context(), gateway.WriterKey, []byte("zombie"), gateway.IfMatch(v1))
				if !errors.Is(err, gateway.ErrPrecondition) {
					t.Fatalf("stale CAS: %v, want ErrPrecondition", err)
				}
				wantStored(t, st, gateway.WriterKey, data, v2)
			})
		}
	})
}

// TestWireLostRaceStaysLost: a create that meets a dropped response while
// another writer already holds the key is still ErrExists (the read-back
// finds the other writer's object, not ours).
func TestWireLostRaceStaysLost(t *testing.T) {
	each(t, func(t *testing.T, c *cloud) {
		st, p := c.through(t, 3)
		theirs := []byte("theirs " + unique(""))
		v, err := st.Put(t.Context(), "commits/3", theirs, gateway.IfAbsent())
		if err != nil {
			t.Fatal(err)
		}
		p.SetRules(firstWrite(c, faultproxy.DropResponse))
		_, err = st.Put(t.Context(), "commits/3", []byte("mine "+unique("")), gateway.IfAbsent())
		if !errors.Is(err, gateway.ErrExists) {
			t.Fatalf("create on a taken key after a dropped response: %v, want ErrExists", err)
		}
		wantFired(t, p, faultproxy.DropResponse)
		wantStored(t, st, "commits/3", theirs, v)
	})
}

// TestWireUnknownOutcome: a create whose response was lost, whose retry
// was refused, and whose read-back fails too (every read answered 503)
// cannot be resolved: the error is ErrUnknownOutcome, never ErrExists and
// never success.
func TestWireUnknownOutcome(t *testing.T) {
	each(t, func(t *testing.T, c *cloud) {
		st, p := c.through(t, 4)
		reads := func(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }
		p.SetRules(firstWrite(c, faultproxy.DropResponse),
			&faultproxy.Rule{Match: reads, Faults: []faultproxy.Kind{faultproxy.Busy}})
		begin := time.Now()
		// fake-gcs-server's client retries until the context ends.
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, err := st.Put(ctx, "offsets/9", []byte("batch 9 "+unique("")), gateway.IfAbsent())
		if !errors.Is(err, gateway.ErrUnknownOutcome) {
			t.Fatalf("unresolvable create: %v, want ErrUnknownOutcome", err)
		}
		if errors.Is(err, gateway.ErrExists) {
			t.Fatalf("unresolvable create also reads as ErrExists: %v", err)
		}
		tally.add(t, p.Events())
		tally.unknown(t)
		t.Logf("resolved as unknown in %s: %v", time.Since(begin).Round(time.Millisecond), err)
	})
}

// TestWireGetCutBody: a GET whose body is cut short is read again; the
// caller gets the whole object, never an error for a readable key.
func TestWireGetCutBody(t *testing.T) {
	each(t, func(t *testing.T, c *cloud) {
		st, p := c.through(t, 5)
		data := []byte("writer record epoch=4 " + unique(""))
		v, err := st.Put(t.Context(), gateway.WriterKey, data, gateway.IfAbsent())
		if err != nil {
			t.Fatal(err)
		}
		p.SetRules(&faultproxy.Rule{Method: http.MethodGet, Nth: 1, Faults: []faultproxy.Kind{faultproxy.CutBody}})
		wantStored(t, st, gateway.WriterKey, data, v)
		wantFired(t, p, faultproxy.CutBody)
	})
}

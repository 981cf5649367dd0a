// Package enginetest holds what tests that run a query share: a world of
// in-memory stores the query reads, writes and checkpoints to.
package enginetest

import (
	"context"
	"net/url"
	"time"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// World is one test's stores: mem://<name> stores (input, output) and a
// checkpoint, all optionally behind one fault injector.
type World struct {
	Stores memstore.Named
	CP     *memstore.Store
}

// NewWorld is a world with an empty checkpoint and no stores yet.
func NewWorld() *World {
	return &World{CP: memstore.New()}
}

// Store is mem://<name>, made on first use.
func (w *World) Store(name string) *memstore.Store { return w.Stores.Get(name) }

// Registry serves mem:// (through faults when given) and file://.
func (w *World) Registry(f *gateway.Faults) *gateway.Registry {
	return gateway.NewRegistry().
		Register("mem", func(_ context.Context, u *url.URL) (gateway.Store, error) {
			var s gateway.Store = w.Store(u.Host)
			if f != nil {
				s = f.Wrap(s)
			}
			return s, nil
		}).
		Register("file", filestore.Open)
}

// Options for a run on w (through faults when given); each run is a new
// process (pid) that may take over from the last one at once.
func (w *World) Options(f *gateway.Faults, pid int) engine.Options {
	var cp gateway.Store = w.CP
	if f != nil {
		cp = f.Wrap(cp)
	}
	return engine.Options{
		Checkpoint: cp, Registry: w.Registry(f),
		Session: gateway.SessionOptions{Host: "test-host", PID: pid, Lease: time.Minute, Heartbeat: -1,
			ProcessAlive: func(p int) bool { return p == pid }},
	}
}

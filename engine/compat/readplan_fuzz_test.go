package compat

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// FuzzReadEnginePlan puts fuzzed bytes at _ckgate/plan.json and checks that
// ReadEnginePlan never panics, and that every rejection names the key and
// is ErrCorrupt or ErrUnsupportedVersion; an accepted plan converts.
func FuzzReadEnginePlan(f *testing.F) {
	f.Add([]byte(`{"version":1,"name":"q","fingerprint":"sha256:ab","stateful":{"operator":"dedup","keys":["id"]},"partitions":4,"source":{"kind":"files","path":"file:///in"},"sink":{"kind":"noop"}}` + "\n"))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"stateful":{"aggregates":[{"count":""}]}}`))
	f.Add([]byte(`{"version":1`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms := memstore.New()
		ctx := context.Background()
		if _, err := ms.Put(ctx, engine.PlanKey, data, gateway.None()); err != nil {
			t.Fatal(err)
		}
		p, err := ReadEnginePlan(ctx, ms)
		if err != nil {
			if !strings.Contains(err.Error(), engine.PlanKey) {
				t.Fatalf("error does not name %s: %v", engine.PlanKey, err)
			}
			if !errors.Is(err, checkpoint.ErrCorrupt) && !errors.Is(err, checkpoint.ErrUnsupportedVersion) {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		FromEnginePlan(p)
	})
}

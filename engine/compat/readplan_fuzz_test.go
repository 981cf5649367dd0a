package compat

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// FuzzReadEnginePlan puts fuzzed bytes at _ckgate/plan.json and checks that
// checkpoint.ReadPlan, the one reader compat uses, never panics, and that
// every rejection names the key and is ErrCorrupt or
// ErrUnsupportedVersion; an accepted plan converts (FromEnginePlan).
func FuzzReadEnginePlan(f *testing.F) {
	f.Add([]byte(`{"version":1,"name":"q","fingerprint":"sha256:ab","stateful":{"operator":"dedup","keys":["id"]},"partitions":4,"source":{"kind":"files","path":"file:///in"},"sink":{"kind":"noop"}}` + "\n"))
	// the format with settings (checkpoint.PlanSettings), and the one before
	f.Add([]byte(`{"version":1,"name":"s","fingerprint":"sha256:ab","plan":{"source_kind":"rate","event_time":"ts","operator":"session_window","keys":["k"],"gap_ms":2000,"output_mode":"append"},"partitions":4,"source":{"kind":"rate","rows_per_second":"100","keys":"4","start_ms":"1"},"sink":{"kind":"http","url":"https://h/x","url_sha256":"sha256:cd"},"settings":{"event_time":"ts","watermark_ms":10000,"where":"value > 5","source_options":{"total_rows":"300"},"sink_options":{"batch_size":"500","headers":"Authorization","headers_sha256":"sha256:ef"},"state_format":"ckgs/1"}}` + "\n"))
	f.Add([]byte(`{"version":1,"settings":{"event_time":"","source_options":null,"sink_options":null}}`))
	f.Add([]byte(`{"version":1,"settings":null}`))
	if old, err := os.ReadFile("testdata/ckgate-plan-before-settings.json"); err == nil {
		f.Add(old)
	} else {
		f.Fatal(err)
	}
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"stateful":{"aggregates":[{"count":""}]}}`))
	f.Add([]byte(`{"version":1`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms := memstore.New()
		ctx := context.Background()
		if _, err := ms.Put(ctx, checkpoint.PlanKey, data, gateway.None()); err != nil {
			t.Fatal(err)
		}
		p, err := checkpoint.ReadPlan(ctx, ms)
		if err != nil {
			if !strings.Contains(err.Error(), checkpoint.PlanKey) {
				t.Fatalf("error does not name %s: %v", checkpoint.PlanKey, err)
			}
			if !errors.Is(err, checkpoint.ErrCorrupt) && !errors.Is(err, checkpoint.ErrUnsupportedVersion) {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		FromEnginePlan(p)
	})
}

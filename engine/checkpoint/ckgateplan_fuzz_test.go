package checkpoint

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// FuzzReadPlan puts fuzzed bytes at _ckgate/plan.json and checks that
// ReadPlan never panics, that every rejection is a *KeyError naming the key
// and is ErrCorrupt or ErrUnsupportedVersion, and that an accepted plan
// encodes back to bytes ReadPlan accepts with the same content.
func FuzzReadPlan(f *testing.F) {
	f.Add([]byte(`{"version":1,"name":"q","fingerprint":"sha256:ab","stateful":{"operator":"dedup","keys":["id"]},"partitions":4,"source":{"kind":"files","path":"file:///in"},"sink":{"kind":"noop"}}` + "\n"))
	f.Add([]byte(`{"version":1,"name":"s","fingerprint":"sha256:ab","plan":{"source_kind":"rate","event_time":"ts","operator":"session_window","keys":["k"],"gap_ms":2000,"aggregates":[{"Func":"count","Field":""}],"output_mode":"append"},"partitions":4,"source":{"kind":"rate","rows_per_second":"100","keys":"4","start_ms":"1"},"sink":{"kind":"http","url":"https://h/x","url_sha256":"sha256:cd"},"settings":{"event_time":"ts","watermark_ms":10000,"where":"value > 5","source_options":{"total_rows":"300"},"sink_options":{"batch_size":"500","headers":"Authorization","headers_sha256":"sha256:ef"},"state_format":"ckgs/1"}}` + "\n"))
	f.Add([]byte(`{"version":1,"settings":null}`))
	old, err := os.ReadFile("../compat/testdata/ckgate-plan-before-settings.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(old)
	for _, s := range []string{`{"version":2}`, `{"version":0}`, `{"version":1}{}`, `{"version":1`, ``, `null`, `[]`, `{"version":1,"partitions":"4"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms := memstore.New()
		ctx := context.Background()
		if _, err := ms.Put(ctx, PlanKey, data, gateway.None()); err != nil {
			t.Fatal(err)
		}
		p, err := ReadPlan(ctx, ms)
		if err != nil {
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != PlanKey || !strings.Contains(err.Error(), PlanKey) {
				t.Fatalf("error is not a *KeyError naming %s: %v", PlanKey, err)
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupportedVersion) {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		again, err := DecodePlan(p.Encode())
		if err != nil {
			t.Fatalf("an accepted plan does not decode once encoded: %v", err)
		}
		if string(again.Encode()) != string(p.Encode()) {
			t.Fatalf("plan changed on a round trip:\n%s\n%s", p.Encode(), again.Encode())
		}
	})
}

// TestReadQueryID: absent metadata is a new checkpoint (""), a good one
// gives its id, one without an id or of bad JSON is a *KeyError naming it.
func TestReadQueryID(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	if id, err := ReadQueryID(ctx, ms); id != "" || err != nil {
		t.Fatalf("no metadata: %q, %v; want \"\", nil", id, err)
	}
	for data, want := range map[string]string{`{"id":"q-1"}`: "q-1", `{"id":""}`: "", `{"id":`: "", `{}`: ""} {
		if _, err := ms.Put(ctx, MetadataKey, []byte(data), gateway.None()); err != nil {
			t.Fatal(err)
		}
		id, err := ReadQueryID(ctx, ms)
		var ke *KeyError
		switch {
		case want != "" && (id != want || err != nil):
			t.Errorf("%s: %q, %v; want %q", data, id, err, want)
		case want == "" && (!errors.As(err, &ke) || ke.Key != MetadataKey || !errors.Is(err, ErrCorrupt)):
			t.Errorf("%s: %q, %v; want a corrupt *KeyError naming %s", data, id, err, MetadataKey)
		}
	}
}

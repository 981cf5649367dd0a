package lifecycle_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/lifecycle"
)

// TestPlannedSourceReadsLikeTheEngine: fresh-start reads _ckgate/plan.json
// with the engine's own reader, so a plan the engine refuses (a newer
// version, no version, cut short) is refused here too, naming the file,
// instead of being taken for a plan with no source.
func TestPlannedSourceReadsLikeTheEngine(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		data string
		want error
	}{
		{`{"version":2,"source":{"kind":"kafka","topic":"t"}}`, checkpoint.ErrUnsupportedVersion},
		{`{"source":{"kind":"kafka","topic":"t"}}`, checkpoint.ErrCorrupt},
		{`{"version":1,"source":{"kind":"kafka"`, checkpoint.ErrTruncated},
	} {
		st := memstore.New()
		if _, err := st.Put(ctx, checkpoint.PlanKey, []byte(tc.data), gateway.None()); err != nil {
			t.Fatal(err)
		}
		kind, _, err := lifecycle.PlannedSource(ctx, st)
		var ke *checkpoint.KeyError
		if !errors.Is(err, tc.want) || !errors.As(err, &ke) || ke.Key != checkpoint.PlanKey {
			t.Errorf("%s: kind %q, %v; want %v naming %s", tc.data, kind, err, tc.want, checkpoint.PlanKey)
		}
	}
	st := memstore.New()
	if _, err := st.Put(ctx, checkpoint.PlanKey, []byte(`{"version":1,"source":{"kind":"kafka","topic":"t"}}`), gateway.None()); err != nil {
		t.Fatal(err)
	}
	if kind, f, err := lifecycle.PlannedSource(ctx, st); kind != "kafka" || f["topic"] != "t" || err != nil {
		t.Errorf("good plan: %q %v %v", kind, f, err)
	}
	if kind, _, err := lifecycle.PlannedSource(ctx, memstore.New()); kind != "" || err != nil {
		t.Errorf("no plan: %q %v; want \"\", nil", kind, err)
	}
}

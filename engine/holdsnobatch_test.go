package engine_test

import (
	"testing"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// TestHoldsNoBatchIgnoresDirMarkers: the directory markers Hadoop's mkdirs
// leaves (offsets/, commits/ through ckgate serve) are no batch; a log
// entry is.
func TestHoldsNoBatchIgnoresDirMarkers(t *testing.T) {
	st := memstore.New()
	for _, k := range []string{"metadata", gateway.DirMarkerKey("offsets"), gateway.DirMarkerKey("commits"), gateway.DirMarkerKey("state/0/0")} {
		if _, err := st.Put(t.Context(), k, nil, gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	if none, err := engine.HoldsNoBatch(t.Context(), st); err != nil || !none {
		t.Fatalf("with directory markers only: HoldsNoBatch = %v, %v; want true", none, err)
	}
	if _, err := st.Put(t.Context(), "offsets/0", []byte("v1"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	if none, err := engine.HoldsNoBatch(t.Context(), st); err != nil || none {
		t.Fatalf("with offsets/0: HoldsNoBatch = %v, %v; want false", none, err)
	}
}

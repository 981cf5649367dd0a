package engine_test

import (
	"errors"
	"testing"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/state"
)

// TestOneErrCorrupt: a corrupt log entry, a corrupt checkpoint codec input
// and a corrupt state file all answer errors.Is for each package's
// ErrCorrupt, so a caller checks one value whichever layer found it.
func TestOneErrCorrupt(t *testing.T) {
	_, stateErr := state.Decode([]byte("CKGS not a state file at all"), nil)
	_, metaErr := checkpoint.DecodeRocksDBCheckpointMetadata([]byte("v1\n{not json"))
	_, zipErr := checkpoint.DecodeRocksDBZip([]byte("not a zip"))
	errs := map[string]error{"state.Decode": stateErr, "checkpoint.DecodeRocksDBCheckpointMetadata": metaErr, "checkpoint.DecodeRocksDBZip": zipErr}
	sentinels := map[string]error{"engine.ErrCorrupt": engine.ErrCorrupt, "checkpoint.ErrCorrupt": checkpoint.ErrCorrupt, "state.ErrCorrupt": state.ErrCorrupt}
	for name, err := range errs {
		if err == nil {
			t.Fatalf("%s accepted corrupt input", name)
		}
		for sname, s := range sentinels {
			if !errors.Is(err, s) {
				t.Errorf("%s: %v is not %s", name, err, sname)
			}
		}
	}
	if !errors.Is(checkpoint.ErrTruncated, engine.ErrCorrupt) {
		t.Error("checkpoint.ErrTruncated is not engine.ErrCorrupt")
	}
}

package delta_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/delta"
)

// A corrupt Delta log is the one corrupt kind of the engine: errors.Is
// answers delta.ErrCorrupt, checkpoint.ErrCorrupt and engine.ErrCorrupt, and
// the message still says what is corrupt.
func TestCorruptLogIsTheOneCorruptKind(t *testing.T) {
	_, commitErr := delta.ParseCommit("_delta_log/00000000000000000000.json", []byte("{not json\n"))
	_, parquetErr := delta.ParseCheckpointParquet("_delta_log/x.checkpoint.parquet", []byte("not parquet"))
	for name, err := range map[string]error{"commit": commitErr, "checkpoint parquet": parquetErr} {
		if !errors.Is(err, delta.ErrCorrupt) || !errors.Is(err, checkpoint.ErrCorrupt) || !errors.Is(err, engine.ErrCorrupt) {
			t.Errorf("%s: %v is not delta.ErrCorrupt, checkpoint.ErrCorrupt and engine.ErrCorrupt", name, err)
		}
		if !strings.Contains(err.Error(), "corrupt Delta log") {
			t.Errorf("%s: %v does not say corrupt Delta log", name, err)
		}
	}
	if errors.Is(checkpoint.ErrCorrupt, delta.ErrCorrupt) {
		t.Error("checkpoint.ErrCorrupt matches delta.ErrCorrupt: a corrupt checkpoint is not a corrupt Delta log")
	}
}

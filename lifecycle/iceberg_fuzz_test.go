package lifecycle

import (
	"errors"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

func FuzzParseIcebergMetadata(f *testing.F) {
	f.Add([]byte(icebergMeta))
	f.Add([]byte(`{"format-version":1,"current-snapshot-id":5,"snapshots":[{"snapshot-id":5,"parent-snapshot-id":5}]}`))
	f.Add([]byte(`{"format-version":2,"table-uuid":"u","current-snapshot-id":1,"snapshots":[{"snapshot-id":1,"parent-snapshot-id":2},{"snapshot-id":2,"parent-snapshot-id":1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseIcebergMetadata("metadata/v1.metadata.json", b)
		if err != nil {
			if !errors.Is(err, checkpoint.ErrCorrupt) {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		for _, s := range m.Snapshots { // parent cycles must end
			m.IsAncestor(s.ID)
		}
		m.IsAncestor(-5)
	})
}

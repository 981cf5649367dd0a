package checkpoint

import (
	"errors"
	"testing"
)

func FuzzDecodeLakeOffsets(f *testing.F) {
	for _, s := range []string{
		`{"sourceVersion":1,"reservoirId":"testId","reservoirVersion":3,"index":-1,"isStartingVersion":false}`,
		`{"sourceVersion":3,"reservoirId":"t","reservoirVersion":7,"index":-19,"isStartingVersion":true}`,
		`{"version":1,"snapshot_id":4426366925596434421,"position":3,"scan_all_files":false}`,
		`{"sourceVersion":2}`, `[]`, `null`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := DecodeDeltaSourceOffset(s); err == nil {
			if d.ReservoirID == "" || d.ReservoirVersion < 0 || (d.SourceVersion != 1 && d.SourceVersion != 3) {
				t.Fatalf("%q decoded to %+v", s, d)
			}
		} else if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupportedVersion) {
			t.Fatalf("%q: error %v of no kind", s, err)
		}
		if o, err := DecodeIcebergSourceOffset(s); err == nil && (o.Version != 1 || o.Position < 0) {
			t.Fatalf("%q decoded to %+v", s, o)
		}
		_ = ParseSourceOffset(OffsetEntry{Present: true, JSON: s})
	})
}

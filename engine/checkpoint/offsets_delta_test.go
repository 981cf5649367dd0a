package checkpoint

import (
	"errors"
	"testing"
)

// The offset strings are the ones delta-io/delta and apache/iceberg write
// (DeltaSourceOffset, StreamingOffset): no real Spark checkpoint with a
// Delta or Iceberg source is available here.
func TestDeltaSourceOffset(t *testing.T) {
	good := map[string]DeltaSourceOffset{
		`{"sourceVersion":1,"reservoirId":"d6a0f1f2-5b1e-4c8e-9a55-0d1c2b3a4f5e","reservoirVersion":3,"index":-1,"isStartingVersion":false}`: {1, "d6a0f1f2-5b1e-4c8e-9a55-0d1c2b3a4f5e", 3, -1, false},
		`{"sourceVersion":1,"reservoirId":"testId","reservoirVersion":0,"index":4,"isStartingVersion":true}`:                                 {1, "testId", 0, 4, true},
		`{"sourceVersion":3,"reservoirId":"t","reservoirVersion":7,"index":-20,"isStartingVersion":false}`:                                   {3, "t", 7, -20, false},
		`{"sourceVersion":3,"reservoirId":"t","reservoirVersion":7,"index":-100,"isStartingVersion":false}`:                                  {3, "t", 7, -100, false},
	}
	for s, want := range good {
		got, err := DecodeDeltaSourceOffset(s)
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v", s, got, err)
		}
		so := ParseSourceOffset(OffsetEntry{Present: true, JSON: s})
		if so.Kind != OffsetDelta || so.Delta == nil || *so.Delta != want {
			t.Errorf("ParseSourceOffset(%s) = %+v", s, so)
		}
	}
	bad := []string{
		`{"sourceVersion":2,"reservoirId":"t","reservoirVersion":1,"index":-1,"isStartingVersion":false}`,
		`{"sourceVersion":1,"reservoirId":"t","reservoirVersion":1,"index":-20,"isStartingVersion":false}`,
		`{"sourceVersion":1,"reservoirId":"","reservoirVersion":1,"index":-1,"isStartingVersion":false}`,
		`{"sourceVersion":1,"reservoirId":"t","reservoirVersion":-1,"index":-1,"isStartingVersion":false}`,
		`{"sourceVersion":1,"reservoirId":"t","reservoirVersion":1,"index":-1}`,
		`{"sourceVersion":1,"reservoirId":"t","reservoirVersion":1.5,"index":-1,"isStartingVersion":false}`,
	}
	for _, s := range bad {
		if o, err := DecodeDeltaSourceOffset(s); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %+v, %v; want ErrCorrupt", s, o, err)
		}
		if so := ParseSourceOffset(OffsetEntry{Present: true, JSON: s}); so.Kind == OffsetDelta {
			t.Errorf("ParseSourceOffset(%s) took it as a Delta offset", s)
		}
	}
	if _, err := DecodeDeltaSourceOffset(`{"sourceVersion":4,"reservoirId":"t","reservoirVersion":1,"index":-1,"isStartingVersion":false}`); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("sourceVersion 4: %v", err)
	}
}

func TestIcebergSourceOffset(t *testing.T) {
	s := `{"version":1,"snapshot_id":4426366925596434421,"position":3,"scan_all_files":false}`
	got, err := DecodeIcebergSourceOffset(s)
	if err != nil || got != (IcebergSourceOffset{1, 4426366925596434421, 3, false}) {
		t.Fatalf("%+v, %v", got, err)
	}
	if so := ParseSourceOffset(OffsetEntry{Present: true, JSON: s}); so.Kind != OffsetIceberg || so.Iceberg == nil || so.Iceberg.SnapshotID != 4426366925596434421 {
		t.Errorf("ParseSourceOffset = %+v", so)
	}
	if _, err := DecodeIcebergSourceOffset(`{"version":2,"snapshot_id":1,"position":0,"scan_all_files":true}`); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("version 2: %v", err)
	}
	if _, err := DecodeIcebergSourceOffset(`{"version":1,"snapshot_id":"x","position":0,"scan_all_files":true}`); !errors.Is(err, ErrCorrupt) {
		t.Errorf("string snapshot id: %v", err)
	}
}

package delta

import "testing"

func TestParseLogName(t *testing.T) {
	cases := []struct {
		name  string
		kind  FileKind
		v     int64
		part  int
		parts int
		ok    bool
	}{
		{"00000000000000000010.json", KindCommit, 10, 1, 1, true},
		{"00000000000000000010.checkpoint.parquet", KindCheckpoint, 10, 1, 1, true},
		{"00000000000000000001.checkpoint.0000000002.0000000002.parquet", KindMultiPartCheckpoint, 1, 2, 2, true},
		{"00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json", KindV2Checkpoint, 2, 1, 1, true},
		{"00000000000000000002.checkpoint.e8fa2696-9728-4e9c-b285-634743fdd4fb.parquet", KindV2Checkpoint, 2, 1, 1, true},
		{"00000000000000000003.00000000000000000007.compacted.json", KindCompacted, 3, 1, 1, true},
		{"00000000000000000003.crc", KindChecksum, 3, 1, 1, true},
		{".00000000000000000003.json.crc", KindOther, 0, 0, 0, false},
		{"_last_checkpoint", KindOther, 0, 0, 0, false},
		{"0000000000000000010.json", KindOther, 0, 0, 0, false},                                      // 19 digits
		{"00000000000000000010.json.tmp", KindOther, 0, 0, 0, false},                                 // temp file
		{"00000000000000000001.checkpoint.0000000003.0000000002.parquet", KindOther, 0, 0, 0, false}, // part > parts
		{"00000000000000000001.checkpoint.not-a-uuid.json", KindOther, 0, 0, 0, false},
		{"99999999999999999999.json", KindOther, 0, 0, 0, false}, // overflows int64
	}
	for _, c := range cases {
		f, ok := ParseLogName(c.name)
		if ok != c.ok || f.Kind != c.kind || (ok && (f.Version != c.v || f.Part != c.part || f.Parts != c.parts)) {
			t.Errorf("ParseLogName(%q) = %+v, %v; want kind %v v%d part %d/%d ok %v", c.name, f, ok, c.kind, c.v, c.part, c.parts, c.ok)
		}
		if ok && f.Key() != LogDir+c.name {
			t.Errorf("Key() = %q", f.Key())
		}
	}
	if k := MultiPartCheckpointKey(1, 2, 2); k != LogDir+"00000000000000000001.checkpoint.0000000002.0000000002.parquet" {
		t.Errorf("MultiPartCheckpointKey = %q", k)
	}
	if k := CommitKey(7); k != "_delta_log/00000000000000000007.json" {
		t.Errorf("CommitKey = %q", k)
	}
}

func TestDVKeyFromRealTable(t *testing.T) {
	// from testdata/delta/dv-partitioned-with-checkpoint/_delta_log/00000000000000000011.json
	k, ok, err := DVKey("file:///t", &DeletionVector{StorageType: "u", PathOrInlineDv: "Zcq?bs*HKQWCB[Sjf[.o"})
	if err != nil || !ok {
		t.Fatal(k, ok, err)
	}
	if k != "deletion_vector_be3f06b1-59b3-4537-b5de-554c3bb2fad9.bin" { // a file of that table
		t.Errorf("DVKey = %q", k)
	}
}

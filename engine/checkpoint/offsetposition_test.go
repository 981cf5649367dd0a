package checkpoint

import "testing"

func TestOffsetPosition(t *testing.T) {
	for _, c := range []struct {
		json string
		pos  int64
		kind string
		ok   bool
	}{
		{`42`, 42, OffsetLong, true},
		{`{"logOffset":7}`, 7, OffsetFile, true},
		{`{"t":{"0":10,"1":5},"u":{"0":1}}`, 16, OffsetKafka, true},
		{`{"0":{"value":30,"runTimeMs":1},"1":{"value":12,"runTimeMs":1}}`, 42, OffsetRate, true},
		{`{"sourceVersion":1,"reservoirId":"a1","reservoirVersion":9,"index":-1,"isStartingVersion":false}`, 9, "delta", true},
		{`{"reservoirVersion":"x"}`, 0, "", false},
		{`{"other":1}`, 0, "", false},
	} {
		pos, kind, ok := OffsetPosition(ParseSourceOffset(OffsetEntry{JSON: c.json, Present: true}))
		if pos != c.pos || kind != c.kind || ok != c.ok {
			t.Errorf("%s: %d %q %v, want %d %q %v", c.json, pos, kind, ok, c.pos, c.kind, c.ok)
		}
	}
	if _, _, ok := OffsetPosition(ParseSourceOffset(OffsetEntry{})); ok {
		t.Error("no offset yet has a position")
	}
}

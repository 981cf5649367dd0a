package delta_test

import (
	"testing"

	"github.com/ckgate/ckgate/engine/delta"
)

// FuzzParseSourceOffset: any text parses or is refused without a panic,
// and what parses writes back to an offset that parses to the same
// position.
func FuzzParseSourceOffset(f *testing.F) {
	for _, s := range []string{
		`{"sourceVersion":1,"reservoirId":"testId","reservoirVersion":3,"index":-1,"isStartingVersion":false}`,
		`{"sourceVersion":3,"reservoirId":"5c1b3e1c-4c5f-4a4e-9a57-3e4d6a3d9f10","reservoirVersion":0,"index":-100,"isStartingVersion":true}`,
		`{"sourceVersion":3,"reservoirId":"x","reservoirVersion":7,"index":-20,"isStartingVersion":false}`,
		`{"sourceVersion":2,"reservoirId":"x","reservoirVersion":1,"index":0,"isStartingVersion":false}`,
		`{"sourceVersion":1,"reservoirId":"","reservoirVersion":1,"index":0,"isStartingVersion":false}`,
		`{"logOffset":3}`, `null`, `[`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := delta.ParseSourceOffset(s)
		if err != nil {
			return
		}
		q, err := delta.ParseSourceOffset(p.SourceOffset())
		if err != nil || q != p {
			t.Fatalf("%q → %+v → %s → %+v, %v", s, p, p.SourceOffset(), q, err)
		}
	})
}

func TestParseSourceOffset(t *testing.T) {
	p, err := delta.ParseSourceOffset(`{"sourceVersion":1,"reservoirId":"testId","reservoirVersion":3,"index":-1,"isStartingVersion":false}`)
	if err != nil || p != (delta.Position{TableID: "testId", Version: 3, Index: -1}) {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{
		`{"sourceVersion":2,"reservoirId":"x","reservoirVersion":1,"index":0,"isStartingVersion":false}`,
		`{"sourceVersion":1,"reservoirVersion":1,"index":0,"isStartingVersion":false}`,
		`{"sourceVersion":1,"reservoirId":"x","reservoirVersion":-1,"index":0,"isStartingVersion":false}`,
	} {
		if _, err := delta.ParseSourceOffset(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}

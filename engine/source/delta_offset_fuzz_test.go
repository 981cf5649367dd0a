package source

import (
	"testing"

	"github.com/ckgate/ckgate/engine/delta"
)

// FuzzDeltaPosition: any offset text reads as a position or is refused
// without a panic, and a position written back (delta.Position.SourceOffset)
// reads as the same position.
func FuzzDeltaPosition(f *testing.F) {
	for _, s := range []string{
		`{"sourceVersion":1,"reservoirId":"testId","reservoirVersion":3,"index":-1,"isStartingVersion":false}`,
		`{"sourceVersion":3,"reservoirId":"5c1b3e1c-4c5f-4a4e-9a57-3e4d6a3d9f10","reservoirVersion":0,"index":-100,"isStartingVersion":true}`,
		`{"sourceVersion":3,"reservoirId":"x","reservoirVersion":7,"index":-20,"isStartingVersion":false}`,
		`{"sourceVersion":2,"reservoirId":"x","reservoirVersion":1,"index":0,"isStartingVersion":false}`,
		`{"logOffset":3}`, `null`, `[`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := DeltaPosition(s)
		if err != nil {
			return
		}
		q, err := DeltaPosition(p.SourceOffset())
		if err != nil || q != p {
			t.Fatalf("%q → %+v → %s → %+v, %v", s, p, p.SourceOffset(), q, err)
		}
	})
}

func TestDeltaPosition(t *testing.T) {
	p, err := DeltaPosition(`{"sourceVersion":3,"reservoirId":"testId","reservoirVersion":3,"index":-100,"isStartingVersion":false}`)
	if err != nil || p != (delta.Position{TableID: "testId", Version: 3, Index: delta.BaseIndex}) {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := DeltaPosition(`{"sourceVersion":2,"reservoirId":"x","reservoirVersion":1,"index":0,"isStartingVersion":false}`); err == nil {
		t.Fatal("sourceVersion 2 read")
	}
}

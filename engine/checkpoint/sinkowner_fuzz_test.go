package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzSinkOwner: any bytes either fail to parse or parse into a record
// that encodes and parses back to itself.
//
//	go test -run '^$' -fuzz '^FuzzSinkOwner$' -fuzztime 20s ./engine/checkpoint/
func FuzzSinkOwner(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "sink-owner", "*"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":1,"query_id":"q","checkpoint":"c"} {}`))
	f.Add([]byte(`{"version":2,"query_id":"q","checkpoint":"c"}`))
	f.Add([]byte(`{"version":1,"query_id":"q","checkpoint":"c","from":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := DecodeSinkOwner(b)
		if err != nil {
			return
		}
		enc := EncodeSinkOwner(o)
		again, err := DecodeSinkOwner(enc)
		if err != nil {
			t.Fatalf("round trip: %v\n%s", err, enc)
		}
		if !bytes.Equal(EncodeSinkOwner(again), enc) {
			t.Fatalf("round trip changed the record:\n%s\n%s", enc, EncodeSinkOwner(again))
		}
	})
}

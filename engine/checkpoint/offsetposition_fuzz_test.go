package checkpoint

import "testing"

// FuzzOffsetPosition: any offset JSON gives a position or none, never a
// panic.
func FuzzOffsetPosition(f *testing.F) {
	for _, s := range []string{`42`, `{"logOffset":7}`, `{"t":{"0":10,"1":5}}`, `{"0":{"value":30,"runTimeMs":1}}`,
		`{"sourceVersion":1,"reservoirId":"a1","reservoirVersion":9,"index":-1,"isStartingVersion":false}`, `{"reservoirVersion":1e400}`, `-`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o := ParseSourceOffset(OffsetEntry{JSON: s, Present: true})
		if _, kind, ok := OffsetPosition(o); ok != (kind != "") {
			t.Fatalf("%q: kind %q ok %v", s, kind, ok)
		}
	})
}

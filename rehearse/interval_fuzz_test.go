package rehearse

import "testing"

func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"2026-01-01T00:00:00Z..2026-01-01T01:00:00Z", "0..1", "5..5", "..", "1..",
		"2026-01-01T00:00:00.5+02:00..1767225600000", "a..b", "-9223372036854775808..9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		iv, err := ParseInterval(s)
		if err != nil {
			return
		}
		if iv.End <= iv.Start {
			t.Fatalf("%q: end %d not after start %d", s, iv.End, iv.Start)
		}
		// RFC 3339 round trips to the millisecond within the years it can write
		if iv.Start < -62135596800000 || iv.End >= 253402300800000 {
			return
		}
		back, err := ParseInterval(iv.String())
		if err != nil || back != iv {
			t.Fatalf("%q → %q → %v, %v", s, iv.String(), back, err)
		}
	})
}

package row

import (
	"math"
	"testing"
)

func TestCompare(t *testing.T) {
	nan := FloatV(math.NaN())
	for _, tc := range []struct {
		a, b Value
		c    int
		ok   bool
	}{
		{IntV(1), IntV(2), -1, true},
		{IntV(math.MaxInt64), IntV(math.MaxInt64 - 1), 1, true}, // exact, not as float64s
		{IntV(2), FloatV(1.5), 1, true},
		{FloatV(-0.5), IntV(0), -1, true},
		{nan, IntV(1), 0, true},
		{StrV("a"), StrV("b"), -1, true},
		{BoolV(false), BoolV(true), -1, true},
		{Value{}, Value{}, 0, true},
		{IntV(1), StrV("1"), 0, false},
		{StrV("1"), IntV(1), 0, false},
		{Value{}, IntV(0), 0, false},
		{BoolV(true), IntV(1), 0, false},
	} {
		if c, ok := Compare(tc.a, tc.b); c != tc.c || ok != tc.ok {
			t.Errorf("Compare(%v, %v) = %d, %v; want %d, %v", tc.a, tc.b, c, ok, tc.c, tc.ok)
		}
	}
}

package checkpoint

import (
	"math"
	"slices"
	"testing"
)

func TestRangesText(t *testing.T) {
	for _, c := range []struct {
		rs   []Range
		want string
	}{
		{nil, ""},
		{[]Range{{3, 3}}, "3"},
		{[]Range{{0, 2}, {4, 4}, {7, 9}}, "0..2,4,7..9"},
	} {
		if got := RangesText(c.rs); got != c.want {
			t.Errorf("RangesText(%v) = %q, want %q", c.rs, got, c.want)
		}
	}
}

func TestMergeRanges(t *testing.T) {
	in := []Range{{5, 6}, {0, 2}, {3, 3}, {10, 12}, {11, 11}, {math.MaxInt64 - 1, math.MaxInt64}, {math.MaxInt64, math.MaxInt64}}
	orig := slices.Clone(in)
	got := MergeRanges(in)
	want := []Range{{0, 3}, {5, 6}, {10, 12}, {math.MaxInt64 - 1, math.MaxInt64}} // 4 is in none: 3 and 5 are not adjacent
	if !slices.Equal(got, want) {
		t.Fatalf("MergeRanges = %v, want %v", got, want)
	}
	if !slices.Equal(in, orig) {
		t.Fatalf("MergeRanges changed its input: %v", in)
	}
	if MergeRanges(nil) != nil {
		t.Fatal("MergeRanges(nil) not nil")
	}
}

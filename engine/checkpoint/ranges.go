package checkpoint

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// RangesText shows ranges as a person reads them: "0..2,4" (a range of
// one id is the id alone); no ranges is "".
func RangesText(rs []Range) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = strconv.FormatInt(r[0], 10)
		if r[0] != r[1] {
			parts[i] += ".." + strconv.FormatInt(r[1], 10)
		}
	}
	return strings.Join(parts, ",")
}

// MergeRanges is the union of rs (ranges of several partitions, in any
// order, overlapping or adjacent), as sorted disjoint ranges; rs is not
// changed.
func MergeRanges(rs []Range) []Range {
	if len(rs) == 0 {
		return nil
	}
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b Range) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	out := []Range{s[0]}
	for _, r := range s[1:] {
		last := &out[len(out)-1]
		if r[0] <= last[1] || (last[1] < math.MaxInt64 && r[0] == last[1]+1) {
			last[1] = max(last[1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

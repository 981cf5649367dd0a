package row

import "strings"

// Compare orders a and b, as a filter's comparison and a min/max aggregate
// both order values: numbers by value (two Ints exactly, an Int and a
// Float as float64s), strings (and JSON texts) byte-wise, false before
// true, nulls equal. ok is false for values of different kinds (a number
// and a string, a null and anything else). A NaN is neither before nor
// after any number (0).
func Compare(a, b Value) (c int, ok bool) {
	if x, ok := a.Num(); ok {
		y, ok := b.Num()
		if !ok {
			return 0, false
		}
		if a.K == Int && b.K == Int {
			return order(a.I, b.I), true
		}
		return order(x, y), true
	}
	if a.K != b.K {
		return 0, false
	}
	switch a.K {
	case Null:
		return 0, true
	case Bool:
		return order(a.I, b.I), true
	default:
		return strings.Compare(a.S, b.S), true
	}
}

// order is cmp.Compare without its NaN rule.
func order[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

package operator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
)

// acc is the running value of one aggregate.
type acc struct {
	n  int64     // rows counted (count) or values seen (sum, avg, min, max)
	i  int64     // integer sum
	f  float64   // float sum
	fl bool      // the sum saw a float
	v  row.Value // min or max so far
}

// aggFunc is one compiled aggregate.
type aggFunc struct {
	fn    string
	field string
	f     *row.Field
}

func compileAggs(as []spec.Aggregate) []aggFunc {
	out := make([]aggFunc, len(as))
	for i, a := range as {
		out[i] = aggFunc{fn: a.Func, field: a.Field, f: row.NewField(a.Field)}
	}
	return out
}

func (a aggFunc) add(x *acc, r *row.Row) {
	if a.field == "" {
		x.n++
		return
	}
	v := a.f.Get(r)
	if v.IsNull() {
		return
	}
	switch a.fn {
	case spec.AggCount:
		x.n++
	case spec.AggSum, spec.AggAvg:
		switch v.K {
		case row.Int:
			x.i += v.I
		case row.Float:
			x.f += v.F
			x.fl = true
		default:
			return
		}
		x.n++
	case spec.AggMin, spec.AggMax:
		if _, ok := v.Num(); !ok && v.K != row.String {
			return
		}
		if x.n == 0 {
			x.v = v
		} else if c, ok := row.Compare(v, x.v); ok && ((a.fn == spec.AggMin && c < 0) || (a.fn == spec.AggMax && c > 0)) {
			x.v = v
		}
		x.n++
	}
}

func (a aggFunc) merge(x, y *acc) {
	switch a.fn {
	case spec.AggMin, spec.AggMax:
		if y.n == 0 {
			return
		}
		if x.n == 0 {
			x.v = y.v
		} else if c, ok := row.Compare(y.v, x.v); ok && ((a.fn == spec.AggMin && c < 0) || (a.fn == spec.AggMax && c > 0)) {
			x.v = y.v
		}
	}
	x.n += y.n
	x.i += y.i
	x.f += y.f
	x.fl = x.fl || y.fl
}

func (a aggFunc) result(x *acc) row.Value {
	switch a.fn {
	case spec.AggCount:
		return row.IntV(x.n)
	case spec.AggSum:
		if x.n == 0 {
			return row.Value{}
		}
		if x.fl {
			return row.FloatV(float64(x.i) + x.f)
		}
		return row.IntV(x.i)
	case spec.AggAvg:
		if x.n == 0 {
			return row.Value{}
		}
		return row.FloatV((float64(x.i) + x.f) / float64(x.n))
	}
	if x.n == 0 {
		return row.Value{}
	}
	return x.v
}

// appendAcc encodes x: n, then for sum/avg the flag, integer and float
// sums, for min/max the value.
func (a aggFunc) appendAcc(b []byte, x *acc) []byte {
	b = binary.AppendUvarint(b, uint64(x.n))
	switch a.fn {
	case spec.AggSum, spec.AggAvg:
		if x.fl {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = binary.AppendVarint(b, x.i)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(x.f))
	case spec.AggMin, spec.AggMax:
		b = x.v.AppendKey(b)
	}
	return b
}

var errAcc = errors.New("bad aggregate encoding")

func (a aggFunc) decodeAcc(b []byte, x *acc) ([]byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > math.MaxInt64 {
		return nil, errAcc
	}
	x.n, b = int64(n), b[w:]
	switch a.fn {
	case spec.AggSum, spec.AggAvg:
		if len(b) < 1 || b[0] > 1 {
			return nil, errAcc
		}
		x.fl = b[0] == 1
		i, w := binary.Varint(b[1:])
		if w <= 0 || len(b) < 1+w+8 {
			return nil, errAcc
		}
		x.i = i
		x.f = math.Float64frombits(binary.BigEndian.Uint64(b[1+w:]))
		b = b[1+w+8:]
	case spec.AggMin, spec.AggMax:
		v, rest, err := row.DecodeKey(b)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errAcc, err)
		}
		x.v, b = v, rest
	}
	return b, nil
}

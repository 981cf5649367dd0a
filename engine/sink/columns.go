package sink

import (
	"fmt"

	"github.com/ckgate/ckgate/engine/operator"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
)

// ColType is the type of one output column, as Parquet and Delta see it.
type ColType uint8

const (
	ColString ColType = iota
	ColLong
	ColDouble
	ColBool
	// ColTimestamp is an instant: Parquet TIMESTAMP(MICROS, adjusted to
	// UTC), Delta "timestamp". Values are epoch milliseconds or RFC 3339.
	ColTimestamp
)

// DeltaType is the type's name in a Delta (Spark) schema string.
func (t ColType) DeltaType() string {
	switch t {
	case ColLong:
		return "long"
	case ColDouble:
		return "double"
	case ColBool:
		return "boolean"
	case ColTimestamp:
		return "timestamp"
	}
	return "string"
}

// Column is one output column.
type Column struct {
	Name string
	Type ColType
}

// TimeColumns are the output columns of s that hold instants: the window
// or session bounds of an aggregation (window_start, window_end) and the
// event-time field of a query that passes its rows through.
func TimeColumns(s *spec.Spec) map[string]bool {
	out := map[string]bool{}
	switch s.Operator.Kind {
	case spec.OpNone, spec.OpDedup:
		if s.EventTime != "" {
			out[s.EventTime] = true
		}
	default:
		out["window_start"], out["window_end"] = true, true
	}
	return out
}

// inferColumns is the union of the rows' fields in the order first seen,
// each typed by what the rows hold: a time column (times) is a timestamp;
// otherwise all integers → long, numbers → double, all booleans →
// boolean, anything else (mixed kinds, nested JSON, only nulls) → string.
func inferColumns(rows []row.Row, times map[string]bool) []Column {
	kinds := map[string]row.Kind{}
	var order []string
	for i := range rows {
		r := &rows[i]
		for j, n := range r.Names {
			k := r.Vals[j].K
			old, seen := kinds[n]
			if !seen {
				order = append(order, n)
				kinds[n] = k
				continue
			}
			kinds[n] = unify(old, k)
		}
	}
	cols := make([]Column, len(order))
	for i, n := range order {
		cols[i] = Column{Name: n, Type: colTypeOf(kinds[n])}
		if times[n] {
			cols[i].Type = ColTimestamp
		}
	}
	return cols
}

// unify is the column kind for values of kinds a and b (Null: none seen).
func unify(a, b row.Kind) row.Kind {
	switch {
	case a == b || b == row.Null:
		return a
	case a == row.Null:
		return b
	case (a == row.Int && b == row.Float) || (a == row.Float && b == row.Int):
		return row.Float
	}
	return row.String
}

func colTypeOf(k row.Kind) ColType {
	switch k {
	case row.Int:
		return ColLong
	case row.Float:
		return ColDouble
	case row.Bool:
		return ColBool
	}
	return ColString
}

// fits reports whether every value of the rows fits cols (a table's
// schema): a field the schema lacks, or a value of another type (an
// integer fits a double, anything fits a string as its JSON text, an
// instant is epoch milliseconds or RFC 3339) is an error naming the
// field and the row.
func fits(rows []row.Row, cols []Column) error {
	types := make(map[string]ColType, len(cols))
	for _, c := range cols {
		types[c.Name] = c.Type
	}
	for i := range rows {
		r := &rows[i]
		for j, n := range r.Names {
			t, ok := types[n]
			if !ok {
				return fmt.Errorf("row %d: field %q is not in the table's schema (%s)", i, n, describeColumns(cols))
			}
			if _, err := convert(r.Vals[j], t); err != nil {
				return fmt.Errorf("row %d: field %q: %w", i, n, err)
			}
		}
	}
	return nil
}

func describeColumns(cols []Column) string {
	s := ""
	for i, c := range cols {
		if i > 0 {
			s += ", "
		}
		s += c.Name + " " + c.Type.DeltaType()
	}
	return s
}

// converted is a value ready for Parquet.
type converted struct {
	null bool
	i    int64
	f    float64
	b    bool
	s    []byte
}

// convert turns v into a value of column type t, or says why it cannot.
func convert(v row.Value, t ColType) (converted, error) {
	if v.K == row.Null {
		return converted{null: true}, nil
	}
	switch t {
	case ColLong:
		if v.K != row.Int {
			return converted{}, fmt.Errorf("%s value %s does not fit a long column", v.K, v.AppendJSON(nil))
		}
		return converted{i: v.I}, nil
	case ColDouble:
		f, ok := v.Num()
		if !ok {
			return converted{}, fmt.Errorf("%s value %s does not fit a double column", v.K, v.AppendJSON(nil))
		}
		return converted{f: f}, nil
	case ColBool:
		if v.K != row.Bool {
			return converted{}, fmt.Errorf("%s value %s does not fit a boolean column", v.K, v.AppendJSON(nil))
		}
		return converted{b: v.I != 0}, nil
	case ColTimestamp:
		ms, ok := operator.EventTime(v)
		if !ok || operator.CheckEventTime(ms) != nil {
			return converted{}, fmt.Errorf("%s value %s is not a time (epoch milliseconds or RFC 3339 from 1970 to 9999)", v.K, v.AppendJSON(nil))
		}
		return converted{i: ms * 1000}, nil
	}
	if v.K == row.String {
		return converted{s: []byte(v.S)}, nil
	}
	return converted{s: v.AppendJSON(nil)}, nil
}

// Package row is the record the engine moves between sources, operators
// and sinks: an ordered list of named values, as a JSON object has them.
//
// Values are small tagged structs (no interface boxing), so a source that
// produces many rows (the rate source) allocates little, and a row keeps the
// order of its fields, so what a sink writes reads like what came in.
package row

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Kind is the type of a Value.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Int
	Float
	String
	// JSON is a nested object or array, kept as its raw JSON text in S.
	JSON
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "bool"
	case Int:
		return "int"
	case Float:
		return "float"
	case String:
		return "string"
	case JSON:
		return "json"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one field value. Bool is stored in I (0 or 1).
type Value struct {
	K Kind
	I int64
	F float64
	S string
}

// IntV, FloatV, StrV and BoolV build values.
func IntV(i int64) Value     { return Value{K: Int, I: i} }
func FloatV(f float64) Value { return Value{K: Float, F: f} }
func StrV(s string) Value    { return Value{K: String, S: s} }
func BoolV(b bool) Value {
	if b {
		return Value{K: Bool, I: 1}
	}
	return Value{K: Bool}
}

// Num returns the value as a float64 and whether it is a number.
func (v Value) Num() (float64, bool) {
	switch v.K {
	case Int:
		return float64(v.I), true
	case Float:
		return v.F, true
	}
	return 0, false
}

// IsNull reports whether v is null (or a missing field).
func (v Value) IsNull() bool { return v.K == Null }

// AppendKey appends a self-delimiting, order-free binary encoding of v: a
// kind byte, then 8 big-endian bytes for bool/int/float, or a uvarint
// length and the bytes for string/json. Equal values encode equally, so
// the encoding is a map key and a hash input.
func (v Value) AppendKey(b []byte) []byte {
	b = append(b, byte(v.K))
	switch v.K {
	case Bool, Int:
		b = binary.BigEndian.AppendUint64(b, uint64(v.I))
	case Float:
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v.F))
	case String, JSON:
		b = binary.AppendUvarint(b, uint64(len(v.S)))
		b = append(b, v.S...)
	}
	return b
}

// Row is one record: field names and values, in order. Names may be shared
// between rows of one source; a row never modifies them.
type Row struct {
	Names []string
	Vals  []Value
}

// Get returns the value of the field name, or a null value.
func (r *Row) Get(name string) Value {
	for i, n := range r.Names {
		if n == name {
			return r.Vals[i]
		}
	}
	return Value{}
}

// Index returns the position of name, or -1.
func (r *Row) Index(name string) int {
	for i, n := range r.Names {
		if n == name {
			return i
		}
	}
	return -1
}

// Len is the number of fields.
func (r *Row) Len() int { return len(r.Names) }

// Clone returns a copy of r that shares nothing with it.
func (r *Row) Clone() Row {
	return Row{Names: append([]string(nil), r.Names...), Vals: append([]Value(nil), r.Vals...)}
}

// Field reads one named field from rows, remembering where it was in the
// last row's names: rows of one source share their names slice, so after
// the first row a read is one comparison. A Field is not safe for
// concurrent use.
type Field struct {
	Name  string
	names *string // &Names[0] of the row last seen
	n     int     // len(Names) of that row
	idx   int     // position there, -1 for missing
}

// NewField returns a reader of field name.
func NewField(name string) *Field { return &Field{Name: name} }

// Get returns the field's value in r, or null.
func (f *Field) Get(r *Row) Value {
	if len(r.Names) == 0 {
		return Value{}
	}
	if &r.Names[0] != f.names || len(r.Names) != f.n {
		f.names, f.n, f.idx = &r.Names[0], len(r.Names), r.Index(f.Name)
	}
	if f.idx < 0 {
		return Value{}
	}
	return r.Vals[f.idx]
}

// Ref returns the field's value in r (without copying it), or nil.
func (f *Field) Ref(r *Row) *Value {
	if len(r.Names) == 0 {
		return nil
	}
	if &r.Names[0] != f.names || len(r.Names) != f.n {
		f.names, f.n, f.idx = &r.Names[0], len(r.Names), r.Index(f.Name)
	}
	if f.idx < 0 {
		return nil
	}
	return &r.Vals[f.idx]
}

package row

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// ParseJSON parses one JSON object into a row, keeping the order of its
// fields. Integers become Int, other numbers Float, nested objects and
// arrays JSON (raw text). A duplicate field keeps its last value.
func ParseJSON(line []byte) (Row, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return Row{}, fmt.Errorf("not a JSON object: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return Row{}, errors.New("not a JSON object")
	}
	var r Row
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Row{}, err
		}
		name, ok := tok.(string)
		if !ok {
			return Row{}, fmt.Errorf("field name %v is not a string", tok)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Row{}, fmt.Errorf("field %q: %w", name, err)
		}
		v, err := parseValue(raw)
		if err != nil {
			return Row{}, fmt.Errorf("field %q: %w", name, err)
		}
		if i := r.Index(name); i >= 0 {
			r.Vals[i] = v
			continue
		}
		r.Names = append(r.Names, name)
		r.Vals = append(r.Vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return Row{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return Row{}, errors.New("data after the JSON object")
	}
	return r, nil
}

func parseValue(raw json.RawMessage) (Value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return Value{}, errors.New("empty value")
	}
	switch raw[0] {
	case 'n':
		return Value{}, nil
	case 't':
		return BoolV(true), nil
	case 'f':
		return BoolV(false), nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return Value{}, err
		}
		return StrV(s), nil
	case '{', '[':
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return Value{}, err
		}
		return Value{K: JSON, S: buf.String()}, nil
	}
	s := string(raw)
	if !bytes.ContainsAny(raw, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return IntV(i), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Value{}, fmt.Errorf("number %s: %w", s, err)
	}
	return FloatV(f), nil
}

// AppendJSON appends r as one compact JSON object (no newline).
func AppendJSON(b []byte, r *Row) []byte {
	b = append(b, '{')
	for i, n := range r.Names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, n)
		b = append(b, ':')
		b = r.Vals[i].AppendJSON(b)
	}
	return append(b, '}')
}

// AppendJSON appends v as JSON. NaN and infinities, which JSON cannot
// hold, are written as null.
func (v Value) AppendJSON(b []byte) []byte {
	switch v.K {
	case Bool:
		return strconv.AppendBool(b, v.I != 0)
	case Int:
		return strconv.AppendInt(b, v.I, 10)
	case Float:
		if math.IsNaN(v.F) || math.IsInf(v.F, 0) {
			return append(b, "null"...)
		}
		if v.F == math.Trunc(v.F) && math.Abs(v.F) < 1e15 {
			return strconv.AppendFloat(b, v.F, 'f', 1, 64)
		}
		return strconv.AppendFloat(b, v.F, 'g', -1, 64)
	case String:
		return appendString(b, v.S)
	case JSON:
		return append(b, v.S...)
	}
	return append(b, "null"...)
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string (invalid UTF-8 becomes U+FFFD).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

package row

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrBadKey is returned for bytes that are not an AppendKey encoding.
var ErrBadKey = errors.New("malformed value encoding")

// DecodeKey reads one value written by AppendKey from b and returns it with
// the rest of b.
func DecodeKey(b []byte) (Value, []byte, error) {
	if len(b) == 0 {
		return Value{}, nil, fmt.Errorf("%w: empty", ErrBadKey)
	}
	k := Kind(b[0])
	b = b[1:]
	switch k {
	case Null:
		return Value{}, b, nil
	case Bool, Int, Float:
		if len(b) < 8 {
			return Value{}, nil, fmt.Errorf("%w: %s cut after %d bytes", ErrBadKey, k, len(b))
		}
		u := binary.BigEndian.Uint64(b)
		b = b[8:]
		switch k {
		case Float:
			return Value{K: Float, F: math.Float64frombits(u)}, b, nil
		case Bool:
			if u > 1 {
				return Value{}, nil, fmt.Errorf("%w: bool %d", ErrBadKey, u)
			}
		}
		return Value{K: k, I: int64(u)}, b, nil
	case String, JSON:
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return Value{}, nil, fmt.Errorf("%w: %s length cut or too long", ErrBadKey, k)
		}
		if w != len(binary.AppendUvarint(nil, n)) {
			// one value, one encoding: keys compare by their bytes
			return Value{}, nil, fmt.Errorf("%w: %s length not minimally encoded", ErrBadKey, k)
		}
		b = b[w:]
		return Value{K: k, S: string(b[:n])}, b[n:], nil
	}
	return Value{}, nil, fmt.Errorf("%w: unknown kind %d", ErrBadKey, k)
}

// DecodeKeys reads n values written by AppendKey.
func DecodeKeys(b []byte, n int) ([]Value, []byte, error) {
	out := make([]Value, n)
	for i := range n {
		v, rest, err := DecodeKey(b)
		if err != nil {
			return nil, nil, fmt.Errorf("value %d: %w", i, err)
		}
		out[i], b = v, rest
	}
	return out, b, nil
}

package row

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestJSONRoundTrip(t *testing.T) {
	in := `{"b":1,"a":"x\"y\u003c","c":2.5,"d":null,"e":true,"f":{"g":[1,2]},"h":-9007199254740993,"i":1e3}`
	r, err := ParseJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if r.Names[0] != "b" || r.Get("h").I != -9007199254740993 || r.Get("i").K != Float || r.Get("f").K != JSON || !r.Get("d").IsNull() {
		t.Fatalf("parsed %+v", r)
	}
	out := AppendJSON(nil, &r)
	want := `{"b":1,"a":"x\"y\u003c","c":2.5,"d":null,"e":true,"f":{"g":[1,2]},"h":-9007199254740993,"i":1000.0}`
	if string(out) != want {
		t.Fatalf("AppendJSON = %s\nwant        %s", out, want)
	}
	for _, bad := range []string{"", "[1]", `{"a":}`, `{"a":1} x`, `{"a":1`} {
		if _, err := ParseJSON([]byte(bad)); err == nil {
			t.Errorf("ParseJSON(%q) accepted", bad)
		}
	}
	if got := FloatV(math.NaN()).AppendJSON(nil); string(got) != "null" {
		t.Errorf("NaN = %s", got)
	}
}

func TestField(t *testing.T) {
	names := []string{"a", "b"}
	f := NewField("b")
	for i := range 3 {
		r := Row{Names: names, Vals: []Value{IntV(int64(i)), IntV(int64(10 + i))}}
		if v := f.Get(&r); v.I != int64(10+i) {
			t.Fatalf("row %d: %v", i, v)
		}
	}
	other := Row{Names: []string{"b"}, Vals: []Value{StrV("x")}}
	if v := f.Get(&other); v.S != "x" {
		t.Fatalf("row with other names: %v", v)
	}
	if v := NewField("z").Get(&other); !v.IsNull() {
		t.Fatalf("missing field: %v", v)
	}
}

// FuzzParseJSON: never panics; what parses re-encodes to JSON that parses
// to the same row.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":"x","c":[1,{"d":null}],"e":1.5e-7,"f":false}`, `{}`, `{"a":"\ud800"}`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseJSON(data)
		if err != nil {
			return
		}
		out := AppendJSON(nil, &r)
		r2, err := ParseJSON(out)
		if err != nil {
			t.Fatalf("re-encoded %s does not parse: %v", out, err)
		}
		if out2 := AppendJSON(nil, &r2); !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}

// FuzzDecodeKey: never panics; what decodes re-encodes to the same bytes.
func FuzzDecodeKey(f *testing.F) {
	f.Add(StrV("user").AppendKey(IntV(-3).AppendKey(nil)))
	f.Add(FloatV(2.5).AppendKey(BoolV(true).AppendKey(nil)))
	f.Fuzz(func(t *testing.T, data []byte) {
		rest := data
		var out []byte
		for len(rest) > 0 {
			v, r, err := DecodeKey(rest)
			if err != nil {
				if !errors.Is(err, ErrBadKey) {
					t.Fatal(err)
				}
				return
			}
			out = v.AppendKey(out)
			rest = r
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("re-encoding differs: %x vs %x", out, data)
		}
	})
}

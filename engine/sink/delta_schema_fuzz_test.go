package sink

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParseDeltaSchema: any schema string parses or is refused without a
// panic; what parses writes back (deltaSchemaString) to the same columns.
func FuzzParseDeltaSchema(f *testing.F) {
	for _, s := range []string{
		deltaSchemaString([]Column{{"id", ColLong}, {"ts", ColTimestamp}, {"x", ColDouble}, {"ok", ColBool}, {"s", ColString}}),
		`{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{}}]}`,
		`{"type":"struct","fields":[{"name":"a","type":{"type":"struct","fields":[]},"nullable":true,"metadata":{}}]}`,
		`{"type":"struct","fields":[{"name":"a","type":"long"},{"name":"a","type":"long"}]}`,
		`{"type":"array"}`, `{}`, `[`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cols, err := parseDeltaSchema(s)
		if err != nil {
			return
		}
		again, err := parseDeltaSchema(deltaSchemaString(cols))
		if err != nil || !slices.Equal(again, cols) {
			t.Fatalf("%q → %v → %v, %v", s, cols, again, err)
		}
	})
}

// TestDeltaSchemaRefusals: types the sink does not write, nested and
// repeated fields are refused naming the field.
func TestDeltaSchemaRefusals(t *testing.T) {
	for s, field := range map[string]string{
		`{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{}}]}`:   `"value"`,
		`{"type":"struct","fields":[{"name":"w","type":{"type":"struct","fields":[]},"nullable":true}]}`: `"w"`,
		`{"type":"struct","fields":[{"name":"a","type":"long"},{"name":"a","type":"long"}]}`:             `"a"`,
		`{"type":"struct","fields":[{"name":"d","type":"decimal(10,2)","nullable":true,"metadata":{}}]}`: `"d"`,
	} {
		if _, err := parseDeltaSchema(s); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want the field %s named", s, err, field)
		}
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}

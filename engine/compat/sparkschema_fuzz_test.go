package compat_test

import (
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/compat"
)

// FuzzSparkSchemaFields: any input returns fields or an error naming the
// schema, never a panic; every field says whether it is nullable.
func FuzzSparkSchemaFields(f *testing.F) {
	for _, s := range []string{
		`{"type":"struct","fields":[{"name":"_1","type":"integer","nullable":false,"metadata":{}}]}`,
		`{"type":"struct","fields":[{"name":"w","type":{"type":"struct","fields":[]},"nullable":true}]}`,
		`{"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":"long"}}]}`,
		`{"fields":null}`, `[]`, `{"fields":[{"type":7}]}`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		fields, err := compat.SparkSchemaFields(js)
		if err != nil {
			if !strings.Contains(err.Error(), "schema ") {
				t.Fatalf("error does not name the schema: %v", err)
			}
			return
		}
		for _, fl := range fields {
			if fl.Nullable == nil {
				t.Fatalf("field %q without nullability", fl.Name)
			}
		}
	})
}

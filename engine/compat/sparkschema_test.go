package compat_test

import (
	"testing"

	"github.com/ckgate/ckgate/engine/compat"
)

// SparkSchemaFields keeps Spark's own type names, where
// FieldsFromSparkSchema normalises them for comparing.
func TestSparkSchemaFieldsKeepsSparkNames(t *testing.T) {
	js := `{"type":"struct","fields":[{"name":"field0","type":"integer","nullable":false,"metadata":{}},` +
		`{"name":"index","type":"long","nullable":true,"metadata":{}},` +
		`{"name":"w","type":{"type":"struct","fields":[{"name":"start","type":"timestamp","nullable":true}]},"nullable":true}]}`
	got, err := compat.SparkSchemaFields(js)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"field0 integer false", "index long true", "w struct true"}
	if len(got) != len(want) {
		t.Fatalf("fields %+v", got)
	}
	for i, f := range got {
		if s := f.Name + " " + f.Type + " " + map[bool]string{true: "true", false: "false"}[*f.Nullable]; s != want[i] {
			t.Errorf("field %d: %q, want %q", i, s, want[i])
		}
	}
	norm, err := compat.FieldsFromSparkSchema(js)
	if err != nil || norm[0].Type != "int" {
		t.Fatalf("FieldsFromSparkSchema: %+v, %v", norm, err)
	}
	if _, err := compat.SparkSchemaFields(`{"fields":[`); err == nil {
		t.Fatal("truncated schema: no error")
	}
}

package policy_test

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/policy"
)

// TestDocumentedInputFields: the input table of docs/policy.md lists
// exactly the fields of policy.Input (nested ones as principal.id,
// known_queries[].root), so the guide cannot drift from the input.
func TestDocumentedInputFields(t *testing.T) {
	doc, err := os.ReadFile("../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "<!-- input fields")
	if !ok {
		t.Fatal("docs/policy.md has no input fields table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	var documented []string
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		documented = append(documented, strings.Trim(strings.TrimSpace(cells[1]), "`"))
	}
	want := inputFields(reflect.TypeFor[policy.Input](), "")
	slices.Sort(documented)
	slices.Sort(want)
	if !slices.Equal(documented, want) {
		t.Fatalf("docs/policy.md documents the input fields\n  %v\npolicy.Input has\n  %v", documented, want)
	}
}

// inputFields are the JSON names of t's fields, and of the fields of the
// structs (and slices of structs) they hold, prefixed.
func inputFields(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, prefix+name)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			out = append(out, inputFields(ft, prefix+name+".")...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, inputFields(ft.Elem(), prefix+name+"[].")...)
		}
	}
	return out
}

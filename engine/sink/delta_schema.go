package sink

import (
	"encoding/json"
	"fmt"
)

// deltaField is one field of a Delta (Spark) schema string.
type deltaField struct {
	Name     string          `json:"name"`
	Type     json.RawMessage `json:"type"`
	Nullable bool            `json:"nullable"`
	Metadata map[string]any  `json:"metadata"`
}

type deltaStruct struct {
	Type   string       `json:"type"`
	Fields []deltaField `json:"fields"`
}

// deltaSchemaString is the Spark schema JSON of cols, every field nullable.
func deltaSchemaString(cols []Column) string {
	s := deltaStruct{Type: "struct", Fields: make([]deltaField, len(cols))}
	for i, c := range cols {
		t, _ := json.Marshal(c.Type.DeltaType())
		s.Fields[i] = deltaField{Name: c.Name, Type: t, Nullable: true, Metadata: map[string]any{}}
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// parseDeltaSchema reads the columns of a Delta schema string. A type the
// Delta sink does not write (integer, date, decimal, a struct, ...) is an
// error naming the field: ckgate writes long, double, boolean, string and
// timestamp columns.
func parseDeltaSchema(schema string) ([]Column, error) {
	var s deltaStruct
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		return nil, fmt.Errorf("schemaString: %w", err)
	}
	if s.Type != "struct" {
		return nil, fmt.Errorf("schemaString: type %q, want struct", s.Type)
	}
	cols := make([]Column, 0, len(s.Fields))
	seen := map[string]bool{}
	for _, f := range s.Fields {
		var name string
		if err := json.Unmarshal(f.Type, &name); err != nil {
			return nil, fmt.Errorf("schemaString: field %q has a nested type (%s), which the ckgate Delta sink does not write", f.Name, f.Type)
		}
		var t ColType
		switch name {
		case "long":
			t = ColLong
		case "double":
			t = ColDouble
		case "boolean":
			t = ColBool
		case "string":
			t = ColString
		case "timestamp":
			t = ColTimestamp
		default:
			return nil, fmt.Errorf("schemaString: field %q has type %s; the ckgate Delta sink writes long, double, boolean, string and timestamp columns", f.Name, name)
		}
		if f.Name == "" || seen[f.Name] {
			return nil, fmt.Errorf("schemaString: field name %q empty or repeated", f.Name)
		}
		seen[f.Name] = true
		cols = append(cols, Column{Name: f.Name, Type: t})
	}
	return cols, nil
}

package compat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ckgate/ckgate/gateway"
)

// Field is one column of a key, value or output schema. In PLAN.json it is
// an object {"name": "_1", "type": "string", "nullable": true} or the short
// form "_1 string" ("_1 string not null"; "string" alone for an unnamed
// field). Type is a Spark SQL type: int, bigint, string, double, float,
// boolean, timestamp, timestamp_ntz, date, binary, smallint, tinyint, void,
// decimal(p,s), array<T>, map<K,V>, struct<name:T,...> (Spark's JSON names
// integer, long, short, byte and null are accepted too). An empty Type
// means "not given": only the number of fields is compared.
type Field struct {
	Name string `json:"name,omitempty"`
	Type string `json:"type,omitempty"`
	// Nullable nil means "not given": nullability is not compared.
	Nullable *bool `json:"nullable,omitempty"`
}

// UnmarshalJSON reads the object or the short string form.
func (f *Field) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		g, err := parseFieldString(s)
		if err != nil {
			return err
		}
		*f = g
		return nil
	}
	type plain Field
	var p plain
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	if p.Type != "" {
		if _, err := parseType(p.Type); err != nil {
			return fmt.Errorf("field %q: %w", p.Name, err)
		}
	}
	*f = Field(p)
	return nil
}

func parseFieldString(s string) (Field, error) {
	s = strings.TrimSpace(s)
	var f Field
	if rest, ok := strings.CutSuffix(strings.ToLower(s), " not null"); ok {
		s = strings.TrimSpace(s[:len(rest)])
		f.Nullable = new(bool)
	}
	name, typ, ok := strings.Cut(s, " ")
	if !ok {
		// one word: a type if it parses as one, else a name
		if _, err := parseType(s); err == nil && s != "" {
			f.Type = s
		} else {
			f.Name = s
		}
		return f, nil
	}
	f.Name, f.Type = name, strings.TrimSpace(typ)
	if _, err := parseType(f.Type); err != nil {
		return Field{}, fmt.Errorf("field %q: %w", s, err)
	}
	return f, nil
}

// MarshalJSON writes the short form ("_1 string not null").
func (f Field) MarshalJSON() ([]byte, error) {
	if !f.shortForm() {
		type plain Field
		return json.Marshal(plain(f))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f.String()); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// shortForm reports whether the short form reads back as f: a name that
// is one word (and, without a type, not a type name).
func (f Field) shortForm() bool {
	if f.Name == "" {
		return f.Type != ""
	}
	for _, c := range f.Name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	if f.Type == "" {
		_, err := parseType(f.Name)
		return err != nil
	}
	return true
}

// String is the short form: "name type [not null]".
func (f Field) String() string {
	s := strings.TrimSpace(f.Name + " " + displayType(f.Type))
	if f.Nullable != nil && !*f.Nullable {
		s += " not null"
	}
	if s == "" {
		return "?"
	}
	return s
}

func fieldsText(fs []Field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// dataType is a parsed Spark SQL type.
type dataType struct {
	name   string // int, bigint, ..., decimal(10,2), array, map, struct
	fields []structMember
	elem   *dataType // array element, map value
	key    *dataType // map key
}

type structMember struct {
	name     string
	typ      *dataType
	nullable bool
}

var typeAliases = map[string]string{
	"integer": "int", "int": "int", "long": "bigint", "bigint": "bigint", "short": "smallint", "smallint": "smallint",
	"byte": "tinyint", "tinyint": "tinyint", "float": "float", "real": "float", "double": "double", "string": "string",
	"boolean": "boolean", "bool": "boolean", "binary": "binary", "date": "date", "timestamp": "timestamp",
	"timestamp_ltz": "timestamp", "timestamp_ntz": "timestamp_ntz", "null": "void", "void": "void", "variant": "variant",
	"calendarinterval": "interval", "interval": "interval",
}

// shape is the type without field names: what Spark compares
// (equalsIgnoreNameAndCompatibleNullability ignores names at every level).
func (t *dataType) shape() string {
	switch t.name {
	case "struct":
		parts := make([]string, len(t.fields))
		for i, f := range t.fields {
			parts[i] = f.typ.shape()
		}
		return "struct<" + strings.Join(parts, ",") + ">"
	case "array":
		return "array<" + t.elem.shape() + ">"
	case "map":
		return "map<" + t.key.shape() + "," + t.elem.shape() + ">"
	}
	return t.name
}

// display is the type with field names (Spark's simpleString).
func (t *dataType) display() string {
	switch t.name {
	case "struct":
		parts := make([]string, len(t.fields))
		for i, f := range t.fields {
			parts[i] = f.name + ":" + f.typ.display()
		}
		return "struct<" + strings.Join(parts, ",") + ">"
	case "array":
		return "array<" + t.elem.display() + ">"
	case "map":
		return "map<" + t.key.display() + "," + t.elem.display() + ">"
	}
	return t.name
}

// typeShape returns the comparable form of a type string ("" for "").
func typeShape(s string) string {
	if s == "" {
		return ""
	}
	t, err := parseType(s)
	if err != nil {
		return strings.ToLower(s)
	}
	return t.shape()
}

func displayType(s string) string {
	if s == "" {
		return ""
	}
	t, err := parseType(s)
	if err != nil {
		return s
	}
	return t.display()
}

// parseType parses a DDL type string: int, decimal(10,2),
// struct<a:int,b:array<string>>, map<string,bigint>.
func parseType(s string) (*dataType, error) {
	p := &typeParser{s: s}
	t, err := p.parse(0)
	if err != nil {
		return nil, fmt.Errorf("type %q: %w", s, err)
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("type %q: unexpected %q", s, p.s[p.i:])
	}
	return t, nil
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *typeParser) word() string {
	p.space()
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

func (p *typeParser) eat(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

const maxTypeDepth = 32

func (p *typeParser) parse(depth int) (*dataType, error) {
	if depth > maxTypeDepth {
		return nil, errors.New("nested too deeply")
	}
	w := strings.ToLower(p.word())
	switch w {
	case "":
		return nil, fmt.Errorf("a type expected at offset %d", p.i)
	case "decimal", "dec", "numeric":
		if !p.eat('(') {
			return &dataType{name: "decimal(10,0)"}, nil
		}
		prec := p.word()
		scale := "0"
		if p.eat(',') {
			scale = p.word()
		}
		if !p.eat(')') || !gateway.AllDigits(prec) || !gateway.AllDigits(scale) {
			return nil, errors.New("decimal(precision,scale) expected")
		}
		return &dataType{name: "decimal(" + prec + "," + scale + ")"}, nil
	case "char", "varchar":
		if !p.eat('(') {
			return nil, errors.New(w + "(length) expected")
		}
		n := p.word()
		if !p.eat(')') || !gateway.AllDigits(n) {
			return nil, errors.New(w + "(length) expected")
		}
		return &dataType{name: w + "(" + n + ")"}, nil
	case "array":
		if !p.eat('<') {
			return nil, errors.New("array<type> expected")
		}
		e, err := p.parse(depth + 1)
		if err != nil {
			return nil, err
		}
		if !p.eat('>') {
			return nil, errors.New("'>' expected after array<type")
		}
		return &dataType{name: "array", elem: e}, nil
	case "map":
		if !p.eat('<') {
			return nil, errors.New("map<key,value> expected")
		}
		k, err := p.parse(depth + 1)
		if err != nil {
			return nil, err
		}
		if !p.eat(',') {
			return nil, errors.New("',' expected in map<key,value>")
		}
		v, err := p.parse(depth + 1)
		if err != nil {
			return nil, err
		}
		if !p.eat('>') {
			return nil, errors.New("'>' expected after map<key,value")
		}
		return &dataType{name: "map", key: k, elem: v}, nil
	case "struct":
		if !p.eat('<') {
			return nil, errors.New("struct<name:type,...> expected")
		}
		t := &dataType{name: "struct"}
		if p.eat('>') {
			return t, nil
		}
		for {
			name := p.word()
			if name == "" || !p.eat(':') {
				return nil, errors.New("name:type expected in struct<...>")
			}
			ft, err := p.parse(depth + 1)
			if err != nil {
				return nil, err
			}
			t.fields = append(t.fields, structMember{name: name, typ: ft, nullable: true})
			if p.eat('>') {
				return t, nil
			}
			if !p.eat(',') {
				return nil, errors.New("',' or '>' expected in struct<...>")
			}
		}
	}
	if c, ok := typeAliases[w]; ok {
		return &dataType{name: c}, nil
	}
	return nil, fmt.Errorf("unknown type %q", w)
}

// sparkJSONType converts a type of Spark's StructType JSON to a DDL string.
func sparkJSONType(raw json.RawMessage, depth int) (string, error) {
	if depth > maxTypeDepth {
		return "", errors.New("nested too deeply")
	}
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		n := strings.ToLower(name)
		if c, ok := typeAliases[n]; ok {
			return c, nil
		}
		if strings.HasPrefix(n, "decimal(") || strings.HasPrefix(n, "char(") || strings.HasPrefix(n, "varchar(") {
			return strings.ReplaceAll(n, " ", ""), nil
		}
		if strings.HasPrefix(n, "string collate ") {
			return "string", nil // collations: compared as string
		}
		return "", fmt.Errorf("unknown type %q", name)
	}
	var obj struct {
		Type        string          `json:"type"`
		Fields      []sparkField    `json:"fields"`
		ElementType json.RawMessage `json:"elementType"`
		KeyType     json.RawMessage `json:"keyType"`
		ValueType   json.RawMessage `json:"valueType"`
		SQLType     json.RawMessage `json:"sqlType"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("type %s: %w", raw, err)
	}
	switch obj.Type {
	case "struct":
		parts := make([]string, len(obj.Fields))
		for i, f := range obj.Fields {
			t, err := sparkJSONType(f.Type, depth+1)
			if err != nil {
				return "", err
			}
			parts[i] = f.Name + ":" + t
		}
		return "struct<" + strings.Join(parts, ",") + ">", nil
	case "array":
		e, err := sparkJSONType(obj.ElementType, depth+1)
		if err != nil {
			return "", err
		}
		return "array<" + e + ">", nil
	case "map":
		k, err := sparkJSONType(obj.KeyType, depth+1)
		if err != nil {
			return "", err
		}
		v, err := sparkJSONType(obj.ValueType, depth+1)
		if err != nil {
			return "", err
		}
		return "map<" + k + "," + v + ">", nil
	case "udt":
		return sparkJSONType(obj.SQLType, depth+1)
	}
	return "", fmt.Errorf("unknown type %s", raw)
}

type sparkField struct {
	Name     string          `json:"name"`
	Type     json.RawMessage `json:"type"`
	Nullable bool            `json:"nullable"`
}

// SparkSchemaFields reads the top-level fields of a Spark StructType JSON
// with the types as Spark names them: a simple type by its JSON name
// ("integer", "long"), a nested one by its kind ("struct", "array", "map").
// It is what a person recognises from Spark's own messages (inspect shows
// it); to compare schemas, FieldsFromSparkSchema normalises the types.
func SparkSchemaFields(js string) ([]Field, error) {
	var st struct {
		Fields []sparkField `json:"fields"`
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		return nil, fmt.Errorf("schema %q: %w", js, err)
	}
	out := make([]Field, len(st.Fields))
	for i, f := range st.Fields {
		var name string
		if json.Unmarshal(f.Type, &name) != nil {
			var nested struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(f.Type, &nested)
			name = nested.Type
		}
		out[i] = Field{Name: f.Name, Type: name, Nullable: &f.Nullable}
	}
	return out, nil
}

// FieldsFromSparkSchema converts a Spark StructType JSON (as state schema
// files hold it) to fields.
func FieldsFromSparkSchema(js string) ([]Field, error) {
	var st struct {
		Type   string       `json:"type"`
		Fields []sparkField `json:"fields"`
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		return nil, fmt.Errorf("schema %q: %w", js, err)
	}
	if st.Type != "struct" {
		return nil, fmt.Errorf("schema %q: not a struct", js)
	}
	out := make([]Field, len(st.Fields))
	for i, f := range st.Fields {
		t, err := sparkJSONType(f.Type, 0)
		if err != nil {
			return nil, fmt.Errorf("schema field %q: %w", f.Name, err)
		}
		out[i] = Field{Name: f.Name, Type: t, Nullable: &f.Nullable}
	}
	return out, nil
}

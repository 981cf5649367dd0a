package spec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ckgate/ckgate/gateway"
)

// Error is a spec problem: the dotted path of the field, the line when
// known, and what is wrong.
type Error struct {
	File  string // the spec file, when loaded from one
	Field string // "operator.gap"; "" for the document as a whole
	Line  int    // 1-based; 0 when unknown
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// MaxSize is the largest spec Parse accepts.
const MaxSize = 1 << 20

// Load reads and parses the spec file at path; relative paths in it are
// resolved against its directory.
func Load(path string) (*Spec, error) {
	data, err := gateway.ReadRegularFile(path, MaxSize+1)
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", path, err)
	}
	s, err := Parse(data)
	if err != nil {
		var se *Error
		if errors.As(err, &se) {
			se.File = path
		}
		return nil, err
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", path, err)
	}
	s.Dir = abs
	return s, nil
}

// Parse parses and validates a spec and fills in defaults.
func Parse(data []byte) (*Spec, error) {
	if len(data) > MaxSize {
		return nil, &Error{Msg: fmt.Sprintf("spec is %d bytes, more than %d", len(data), MaxSize)}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, &Error{Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{Line: extra.Line, Msg: "more than one YAML document"}
	}
	if len(doc.Content) == 0 {
		return nil, &Error{Msg: "empty spec"}
	}
	root := doc.Content[0]
	lines := map[int]string{}
	if err := walk(root, "", reflect.TypeFor[Spec](), lines); err != nil {
		return nil, err
	}
	var s Spec
	if err := root.Decode(&s); err != nil {
		return nil, typeError(err, lines)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

var (
	durationType  = reflect.TypeFor[Duration]()
	aggregateType = reflect.TypeFor[Aggregate]()
)

// walk checks node against t: unknown fields are refused, durations and
// aggregates are checked with their path, and the line of every value is
// recorded for decoding errors.
func walk(n *yaml.Node, path string, t reflect.Type, lines map[int]string) error {
	if n.Kind == yaml.AliasNode {
		return &Error{Field: path, Line: n.Line, Msg: "YAML aliases are not supported in a spec"}
	}
	if _, ok := lines[n.Line]; !ok || len(path) > len(lines[n.Line]) {
		lines[n.Line] = path
	}
	switch t {
	case durationType:
		if n.Kind != yaml.ScalarNode {
			return &Error{Field: path, Line: n.Line, Msg: "want a duration such as 10m"}
		}
		if _, err := ParseDuration(n.Value); err != nil {
			return &Error{Field: path, Line: n.Line, Msg: err.Error()}
		}
		return nil
	case aggregateType:
		if _, err := parseAggregate(n); err != nil {
			return &Error{Field: path, Line: n.Line, Msg: err.Error()}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			if n.Tag == "!!null" {
				return nil
			}
			return &Error{Field: orDoc(path), Line: n.Line, Msg: "want a mapping of fields"}
		}
		fields := map[string]reflect.StructField{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name != "" && name != "-" {
				fields[name] = f
			}
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			f, ok := fields[k.Value]
			if !ok {
				return &Error{Field: p, Line: k.Line, Msg: "unknown field" + suggest(k.Value, fields)}
			}
			if seen[k.Value] {
				return &Error{Field: p, Line: k.Line, Msg: "field given twice"}
			}
			seen[k.Value] = true
			if err := walk(v, p, f.Type, lines); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			if n.Tag == "!!null" {
				return nil
			}
			return &Error{Field: path, Line: n.Line, Msg: "want a list"}
		}
		for i, c := range n.Content {
			if err := walk(c, path+"["+strconv.Itoa(i)+"]", t.Elem(), lines); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			if n.Tag == "!!null" {
				return nil
			}
			return &Error{Field: path, Line: n.Line, Msg: "want a mapping"}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := walk(n.Content[i+1], join(path, n.Content[i].Value), t.Elem(), lines); err != nil {
				return err
			}
		}
	default:
		if n.Kind != yaml.ScalarNode {
			return &Error{Field: path, Line: n.Line, Msg: fmt.Sprintf("want a %s, not a %s", kindName(t), nodeKind(n))}
		}
		if t.Kind() == reflect.Float64 || t.Kind() == reflect.Float32 {
			var f float64
			if n.Decode(&f) == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
				return &Error{Field: path, Line: n.Line, Msg: fmt.Sprintf("%s: want a finite number", n.Value)}
			}
		}
	}
	return nil
}

func orDoc(p string) string {
	if p == "" {
		return ""
	}
	return p
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "whole number"
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "true or false"
	}
	return "string"
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

// suggest names a known field close to name.
func suggest(name string, fields map[string]reflect.StructField) string {
	best, bestD := "", 3
	for f := range fields {
		if d := distance(name, f); d < bestD || (d == bestD && f < best) {
			best, bestD = f, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the Levenshtein distance of short strings.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev = cur
	}
	return prev[len(b)]
}

var lineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// typeError turns a yaml decoding error into an *Error with the field path.
func typeError(err error, lines map[int]string) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return &Error{Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	m := lineRE.FindStringSubmatch(te.Errors[0])
	if m == nil {
		return &Error{Msg: te.Errors[0]}
	}
	line, _ := strconv.Atoi(m[1])
	msg := m[2]
	if i := strings.Index(msg, "cannot unmarshal "); i >= 0 {
		msg = "wrong type: " + msg[i+len("cannot unmarshal "):]
	}
	return &Error{Field: lines[line], Line: line, Msg: msg}
}

// parseAggregate reads "count" or {func: field}.
func parseAggregate(n *yaml.Node) (Aggregate, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value != AggCount {
			return Aggregate{}, fmt.Errorf("aggregate %q: only count stands alone; write {%s: field}", n.Value, n.Value)
		}
		return Aggregate{Func: AggCount}, nil
	case yaml.MappingNode:
		if len(n.Content) != 2 {
			return Aggregate{}, fmt.Errorf("an aggregate is one {function: field} pair")
		}
		f, v := n.Content[0].Value, n.Content[1]
		switch f {
		case AggCount, AggSum, AggMin, AggMax, AggAvg:
		default:
			return Aggregate{}, fmt.Errorf("unknown aggregate function %q (want count, sum, min, max or avg)", f)
		}
		if v.Kind != yaml.ScalarNode || v.Value == "" {
			return Aggregate{}, fmt.Errorf("aggregate %s: want a field name", f)
		}
		return Aggregate{Func: f, Field: v.Value}, nil
	}
	return Aggregate{}, fmt.Errorf("want count or {sum|min|max|avg|count: field}")
}

// UnmarshalYAML reads "count" or {func: field}.
func (a *Aggregate) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseAggregate(n)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// MarshalYAML writes the short form.
func (a Aggregate) MarshalYAML() (any, error) {
	if a.Field == "" {
		return a.Func, nil
	}
	return map[string]string{a.Func: a.Field}, nil
}

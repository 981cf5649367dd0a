package output

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// Each writer's bytes, exactly: what every command's output is made of.
func TestWriters(t *testing.T) {
	for name, c := range map[string]struct {
		write func(w io.Writer) error
		want  string
	}{
		"table, indented": {func(w io.Writer) error {
			tb := NewTable(w).Indent("  ")
			tb.Row("KEY", "SIZE")
			tb.Row("offsets/10", 232)
			tb.Row("a", int64(5))
			return tb.Flush()
		}, "  KEY         SIZE\n  offsets/10  232\n  a           5\n"},
		"a one-cell row ends the columns": {func(w io.Writer) error {
			tb := NewTable(w)
			tb.Row("a", "x")
			tb.Row("remove 3 keys")
			tb.Row("longer key", "y")
			return tb.Flush()
		}, "a  x\nremove 3 keys\nlonger key  y\n"},
		"JSON, indented, HTML escaped, a newline": {func(w io.Writer) error {
			return JSON(w, map[string]any{"a": []int{1}, "b": "<x>"})
		}, "{\n  \"a\": [\n    1\n  ],\n  \"b\": \"\\u003cx\\u003e\"\n}\n"},
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := c.write(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != c.want {
				t.Fatalf("wrote\n%q\nwant\n%q", b.String(), c.want)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestTableReportsTheWriteError(t *testing.T) {
	tb := NewTable(failWriter{})
	tb.Row("a", "b")
	if err := tb.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("flush to a failing writer: %v", err)
	}
	if err := JSON(failWriter{}, 1); err == nil || !strings.Contains(err.Error(), "write JSON") {
		t.Fatalf("JSON to a failing writer: %v", err)
	}
	if err := JUnit(failWriter{}, JUnitSuite{}); err == nil || !strings.Contains(err.Error(), "write JUnit") {
		t.Fatalf("JUnit to a failing writer: %v", err)
	}
}

func TestCell(t *testing.T) {
	if got := Cell("a\tb\nc\rd"); got != "a b c d" {
		t.Fatalf("Cell: %q", got)
	}
	if Dash("") != "-" || Dash("x") != "x" {
		t.Fatal("Dash")
	}
}

// A single suite leaves out what it does not set (skipped, time,
// properties); a suites document keeps its counts even when zero.
func TestJUnitOptionalAttributes(t *testing.T) {
	var b bytes.Buffer
	s := JUnitSuite{Name: "ckgate audit", Tests: 1, Cases: []JUnitCase{{Name: "c", Classname: "checkpoint"}}}
	if err := JUnit(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, xml.Header+"<testsuite ") || !strings.HasSuffix(out, "</testsuite>\n") {
		t.Fatalf("document:\n%s", out)
	}
	for _, no := range []string{"skipped=", "time=", "<properties"} {
		if strings.Contains(out, no) {
			t.Errorf("unset %s written:\n%s", no, out)
		}
	}
	b.Reset()
	zero := 0
	s.Skipped, s.Time = &zero, "0.000"
	s.Properties = &JUnitProperties{Property: []JUnitProperty{{Name: "url", Value: "file:///x"}}}
	if err := JUnit(&b, JUnitSuites{Name: "all", Suites: []JUnitSuite{s}}); err != nil {
		t.Fatal(err)
	}
	var doc JUnitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	if len(doc.Suites) != 1 || doc.Suites[0].Properties == nil || doc.Suites[0].Properties.Property[0].Value != "file:///x" ||
		!strings.Contains(out, `skipped="0" time="0.000"`) {
		t.Fatalf("suites document:\n%s", out)
	}
}

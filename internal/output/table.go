package output

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table aligns the cells of its rows in columns two spaces apart, the
// layout of every ckgate table. Rows are buffered until Flush; a row of
// one cell is written as it is and ends the column block above it.
type Table struct {
	tw     *tabwriter.Writer
	indent string
	err    error
}

// NewTable returns a table that writes to w when flushed.
func NewTable(w io.Writer) *Table {
	return &Table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
}

// Indent makes every later row start with prefix (its first cell is
// prefixed, so the columns stay aligned); it returns t.
func (t *Table) Indent(prefix string) *Table {
	t.indent = prefix
	return t
}

// Row adds one line: each cell as fmt.Sprint shows it, tab-separated.
// A tab or newline inside a cell would break the layout, so the caller
// makes cells one-line (Cell).
func (t *Table) Row(cells ...any) {
	if t.err != nil {
		return
	}
	var b strings.Builder
	b.WriteString(t.indent)
	for i, c := range cells {
		if i > 0 {
			b.WriteByte('\t')
		}
		fmt.Fprint(&b, c)
	}
	b.WriteByte('\n')
	_, t.err = io.WriteString(t.tw, b.String())
}

// Flush writes the buffered rows and returns the first error met.
func (t *Table) Flush() error {
	if t.err == nil {
		t.err = t.tw.Flush()
	}
	if t.err != nil {
		return fmt.Errorf("write table: %w", t.err)
	}
	return nil
}

// Cell keeps s on one table line: tabs and line breaks become spaces.
func Cell(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// Dash shows an empty field as "-".
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Package expr is the small filter language of a spec's `where:` field, a
// subset of CEL's syntax:
//
//	page != "health" && (amount >= 10 || user_id in ["u1", "u2"])
//
// Operands are field names, string literals ("..." or '...'), numbers,
// true, false and null. Operators, loosest first: ||, &&, ! (prefix),
// comparisons == != < <= > >= and `in [list]`, unary minus. Numbers compare
// as numbers (an int equals the same float), strings by bytes; comparing
// different types is false for == and the orderings and true for !=. A
// missing field is null. A row passes when the expression is true.
package expr

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/engine/row"
)

// MaxLen and MaxDepth bound what Parse accepts.
const (
	MaxLen   = 4096
	MaxDepth = 64
)

// Expr is a parsed expression.
type Expr struct {
	src  string
	root node
}

// String returns the source text.
func (e *Expr) String() string { return e.src }

// Fields returns the field names the expression reads, in order of first use.
func (e *Expr) Fields() []string {
	var out []string
	var visit func(n node)
	visit = func(n node) {
		switch n := n.(type) {
		case *field:
			for _, f := range out {
				if f == n.name {
					return
				}
			}
			out = append(out, n.name)
		case *unary:
			visit(n.x)
		case *binary:
			visit(n.l)
			visit(n.r)
		case *inList:
			visit(n.x)
			for _, c := range n.list {
				visit(c)
			}
		}
	}
	visit(e.root)
	return out
}

// Match reports whether r passes the filter.
func (e *Expr) Match(r *row.Row) bool {
	v := e.root.eval(r)
	return v.K == row.Bool && v.I != 0
}

// SyntaxError is a parse error with the byte offset in the source.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("at column %d: %s", e.Pos+1, e.Msg) }

type node interface {
	eval(r *row.Row) row.Value
}

type lit struct{ v row.Value }
type field struct{ name string }
type unary struct {
	op byte // '!' or '-'
	x  node
}
type binary struct {
	op   string
	l, r node
}
type inList struct {
	x    node
	list []node
}

func (n *lit) eval(*row.Row) row.Value     { return n.v }
func (n *field) eval(r *row.Row) row.Value { return r.Get(n.name) }

func (n *unary) eval(r *row.Row) row.Value {
	v := n.x.eval(r)
	if n.op == '!' {
		if v.K != row.Bool {
			return row.Value{}
		}
		return row.BoolV(v.I == 0)
	}
	switch v.K {
	case row.Int:
		return row.IntV(-v.I)
	case row.Float:
		return row.FloatV(-v.F)
	}
	return row.Value{}
}

func truth(v row.Value) bool { return v.K == row.Bool && v.I != 0 }

func (n *binary) eval(r *row.Row) row.Value {
	switch n.op {
	case "&&":
		return row.BoolV(truth(n.l.eval(r)) && truth(n.r.eval(r)))
	case "||":
		return row.BoolV(truth(n.l.eval(r)) || truth(n.r.eval(r)))
	}
	a, b := n.l.eval(r), n.r.eval(r)
	c, ok := row.Compare(a, b)
	switch n.op {
	case "==":
		return row.BoolV(ok && c == 0)
	case "!=":
		return row.BoolV(!ok || c != 0)
	case "<":
		return row.BoolV(ok && c < 0 && ordered(a))
	case "<=":
		return row.BoolV(ok && c <= 0 && ordered(a))
	case ">":
		return row.BoolV(ok && c > 0 && ordered(a))
	case ">=":
		return row.BoolV(ok && c >= 0 && ordered(a))
	}
	return row.Value{}
}

func (n *inList) eval(r *row.Row) row.Value {
	v := n.x.eval(r)
	for _, e := range n.list {
		if c, ok := row.Compare(v, e.eval(r)); ok && c == 0 {
			return row.BoolV(true)
		}
	}
	return row.BoolV(false)
}

func ordered(v row.Value) bool { return v.K == row.Int || v.K == row.Float || v.K == row.String }

// Parse parses src.
func Parse(src string) (*Expr, error) {
	if len(src) > MaxLen {
		return nil, &SyntaxError{Pos: MaxLen, Msg: fmt.Sprintf("expression longer than %d bytes", MaxLen)}
	}
	p := &parser{src: src}
	p.next()
	n, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.errf("unexpected %s", p.tok)
	}
	if !boolish(n) {
		return nil, &SyntaxError{Pos: 0, Msg: "the expression is not a condition (compare a field, e.g. page != \"health\")"}
	}
	return &Expr{src: src, root: n}, nil
}

// boolish reports whether n can be true: a comparison, a logical
// operator, a boolean literal or a field (true when the field is true).
func boolish(n node) bool {
	switch n := n.(type) {
	case *lit:
		return n.v.K == row.Bool
	case *field, *inList:
		return true
	case *unary:
		return n.op == '!'
	case *binary:
		return true
	}
	return false
}

type tkind uint8

const (
	tEOF tkind = iota
	tIdent
	tString
	tInt
	tFloat
	tOp
)

type token struct {
	kind tkind
	text string
	pos  int
	val  row.Value
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tString:
		return strconv.Quote(t.val.S)
	}
	return strconv.Quote(t.text)
}

type parser struct {
	src string
	off int
	tok token
	err error
}

func (p *parser) errf(format string, args ...any) error {
	return &SyntaxError{Pos: p.tok.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) next() {
	for p.off < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.off]) >= 0 {
		p.off++
	}
	start := p.off
	if p.off >= len(p.src) {
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	c := p.src[p.off]
	switch {
	case c == '_' || isLetter(c):
		for p.off < len(p.src) && (p.src[p.off] == '_' || isLetter(p.src[p.off]) || isDigit(p.src[p.off])) {
			p.off++
		}
		p.tok = token{kind: tIdent, text: p.src[start:p.off], pos: start}
	case isDigit(c) || (c == '.' && p.off+1 < len(p.src) && isDigit(p.src[p.off+1])):
		isFloat := false
		for p.off < len(p.src) {
			d := p.src[p.off]
			if isDigit(d) {
				p.off++
			} else if d == '.' || d == 'e' || d == 'E' {
				isFloat = true
				p.off++
				if (d == 'e' || d == 'E') && p.off < len(p.src) && (p.src[p.off] == '+' || p.src[p.off] == '-') {
					p.off++
				}
			} else {
				break
			}
		}
		text := p.src[start:p.off]
		p.tok = token{kind: tInt, text: text, pos: start}
		if !isFloat {
			if i, err := strconv.ParseInt(text, 10, 64); err == nil {
				p.tok.val = row.IntV(i)
				return
			}
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			p.tok = token{kind: tOp, text: text, pos: start}
			p.err = &SyntaxError{Pos: start, Msg: fmt.Sprintf("bad number %q", text)}
			return
		}
		p.tok.kind, p.tok.val = tFloat, row.FloatV(f)
	case c == '"' || c == '\'':
		var b strings.Builder
		p.off++
		for {
			if p.off >= len(p.src) {
				p.err = &SyntaxError{Pos: start, Msg: "unterminated string"}
				p.tok = token{kind: tOp, text: "\"", pos: start}
				return
			}
			d := p.src[p.off]
			if d == c {
				p.off++
				break
			}
			if d == '\\' && p.off+1 < len(p.src) {
				p.off++
				switch e := p.src[p.off]; e {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case '\\', '"', '\'':
					b.WriteByte(e)
				default:
					p.err = &SyntaxError{Pos: p.off - 1, Msg: fmt.Sprintf("unknown escape \\%c", e)}
					p.tok = token{kind: tOp, text: "\\", pos: p.off - 1}
					return
				}
				p.off++
				continue
			}
			b.WriteByte(d)
			p.off++
		}
		p.tok = token{kind: tString, text: p.src[start:p.off], pos: start, val: row.StrV(b.String())}
	default:
		for _, op := range []string{"&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "(", ")", "[", "]", ",", "-"} {
			if strings.HasPrefix(p.src[p.off:], op) {
				p.off += len(op)
				p.tok = token{kind: tOp, text: op, pos: start}
				return
			}
		}
		p.tok = token{kind: tOp, text: string(c), pos: start}
		p.err = &SyntaxError{Pos: start, Msg: fmt.Sprintf("unexpected character %q", c)}
	}
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func (p *parser) is(op string) bool { return p.tok.kind == tOp && p.tok.text == op }

func (p *parser) or(depth int) (node, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.is("||") {
		p.next()
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = &binary{op: "||", l: l, r: r}
	}
	return l, nil
}

func (p *parser) and(depth int) (node, error) {
	l, err := p.not(depth)
	if err != nil {
		return nil, err
	}
	for p.is("&&") {
		p.next()
		r, err := p.not(depth)
		if err != nil {
			return nil, err
		}
		l = &binary{op: "&&", l: l, r: r}
	}
	return l, nil
}

func (p *parser) not(depth int) (node, error) {
	if p.is("!") {
		if depth > MaxDepth {
			return nil, p.errf("expression nested deeper than %d", MaxDepth)
		}
		p.next()
		x, err := p.not(depth + 1)
		if err != nil {
			return nil, err
		}
		return &unary{op: '!', x: x}, nil
	}
	return p.cmp(depth)
}

func (p *parser) cmp(depth int) (node, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	if p.tok.kind == tOp {
		switch op := p.tok.text; op {
		case "==", "!=", "<", "<=", ">", ">=":
			p.next()
			r, err := p.unary(depth)
			if err != nil {
				return nil, err
			}
			return &binary{op: op, l: l, r: r}, nil
		}
	}
	if p.tok.kind == tIdent && p.tok.text == "in" {
		p.next()
		if !p.is("[") {
			return nil, p.errf("want [ after in, not %s", p.tok)
		}
		p.next()
		var list []node
		for !p.is("]") {
			if len(list) > 0 {
				if !p.is(",") {
					return nil, p.errf("want , or ] in a list, not %s", p.tok)
				}
				p.next()
			}
			e, err := p.unary(depth)
			if err != nil {
				return nil, err
			}
			list = append(list, e)
		}
		p.next()
		return &inList{x: l, list: list}, nil
	}
	return l, nil
}

func (p *parser) unary(depth int) (node, error) {
	if p.err != nil {
		return nil, p.err
	}
	if depth > MaxDepth {
		return nil, p.errf("expression nested deeper than %d", MaxDepth)
	}
	t := p.tok
	switch t.kind {
	case tEOF:
		return nil, p.errf("unexpected end of expression")
	case tInt, tFloat, tString:
		p.next()
		return &lit{v: t.val}, nil
	case tIdent:
		p.next()
		switch t.text {
		case "true":
			return &lit{v: row.BoolV(true)}, nil
		case "false":
			return &lit{v: row.BoolV(false)}, nil
		case "null":
			return &lit{v: row.Value{}}, nil
		case "in":
			return nil, &SyntaxError{Pos: t.pos, Msg: "unexpected in"}
		}
		return &field{name: t.text}, nil
	}
	switch t.text {
	case "-":
		p.next()
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &unary{op: '-', x: x}, nil
	case "(":
		p.next()
		x, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if !p.is(")") {
			return nil, p.errf("want ), not %s", p.tok)
		}
		p.next()
		return x, nil
	}
	return nil, p.errf("unexpected %s", t)
}

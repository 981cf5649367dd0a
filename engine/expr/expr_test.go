package expr

import (
	"errors"
	"testing"

	"github.com/ckgate/ckgate/engine/row"
)

func click() *row.Row {
	return &row.Row{Names: []string{"page", "amount", "price", "vip", "user"},
		Vals: []row.Value{row.StrV("cart"), row.IntV(12), row.FloatV(2.5), row.BoolV(true), row.StrV("u1")}}
}

func TestMatch(t *testing.T) {
	tests := map[string]bool{
		`page != "health"`:            true,
		`page == 'cart'`:              true,
		`amount >= 12 && amount < 13`: true,
		`amount > 12`:                 false,
		`amount == 12.0`:              true,
		`price < 3 || page == "x"`:    true,
		`!(price < 3)`:                false,
		`vip`:                         true,
		`!vip`:                        false,
		`vip == true`:                 true,
		`missing == null`:             true,
		`missing != null`:             false,
		`missing > 3`:                 false,
		`page > 3`:                    false,
		`page != 3`:                   true,
		`user in ["u1", "u2"]`:        true,
		`user in []`:                  false,
		`amount in [1, 12.0]`:         true,
		`-amount == -12`:              true,
		`page >= "a" && page < "d"`:   true,
		`(amount > 1 && (page == "cart")) || false`: true,
		"page == \"c\\\"art\"":                      false,
	}
	for src, want := range tests {
		e, err := Parse(src)
		if err != nil {
			t.Errorf("Parse(%q): %v", src, err)
			continue
		}
		if got := e.Match(click()); got != want {
			t.Errorf("%s = %v, want %v", src, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, src := range []string{"", "page ==", `page == "x`, "page === 1", "(a == 1", "a == 1)", "a in 3", "a in [1,", "1.2.3 == a",
		"a == $", "42", `"x"`, "a == 1 b", `"\q" == a`, "in == 1"} {
		_, err := Parse(src)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a SyntaxError", src, err)
		}
	}
}

func TestFields(t *testing.T) {
	e, err := Parse(`a == 1 && (b in [c, 2] || a > d)`)
	if err != nil {
		t.Fatal(err)
	}
	got := e.Fields()
	if len(got) != 4 || got[0] != "a" || got[1] != "b" || got[2] != "c" || got[3] != "d" {
		t.Fatalf("Fields = %v", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`page != "health"`, `a in [1, "x", -2.5e3] && !(b <= 'y') || c`, "((((a))))", "-(-(-a)) == 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T: %v", err, err)
			}
			return
		}
		e.Match(click())
		e.Match(&row.Row{})
		_ = e.Fields()
	})
}

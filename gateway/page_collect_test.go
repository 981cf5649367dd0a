package gateway

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naivePage is the contract's page, from every name in byte order.
func naivePage(names []string, prefix, delim, after string, max int) (entries []string, truncated bool) {
	seen := map[string]bool{}
	for _, n := range names {
		e, grouped := entryOf(n, prefix, delim)
		if e == "" || !grouped && strings.HasSuffix(n, "/") {
			continue // outside prefix, or a directory marker outside any group
		}
		if e > after && !seen[e] {
			seen[e] = true
			entries = append(entries, e)
		}
	}
	slices.Sort(entries)
	if len(entries) > max {
		return entries[:max], true
	}
	return entries, false
}

// entryOf is the entry name n stands for in a page of prefix grouped by
// delim: its common prefix (grouped) or n itself; "" when n is outside
// prefix.
func entryOf(n, prefix, delim string) (e string, grouped bool) {
	if !strings.HasPrefix(n, prefix) {
		return "", false
	}
	if i := strings.Index(n[len(prefix):], delim); delim != "" && i >= 0 {
		return n[:len(prefix)+i+len(delim)], true
	}
	return n, false
}

func pageNames(pg Page) []string {
	var out []string
	for _, a := range pg.Objects {
		out = append(out, a.Key)
	}
	out = append(out, pg.Prefixes...)
	slices.Sort(out)
	return out
}

// checkCollector feeds names in a shuffled order (a flat listing of every
// name, as a service that ignores Start would) and compares the page with
// the naive one; every name the page holds an entry for sorts at or after
// Start, so a service starting there loses nothing.
func checkCollector(t *testing.T, r *rand.Rand, names []string, prefix, delim, after string, max int) {
	t.Helper()
	pc := NewPageCollector(prefix, delim, after, max)
	shuffled := slices.Clone(names)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, n := range shuffled {
		pc.Object(Attrs{Key: n})
	}
	pg := pc.Page(false)
	want, truncated := naivePage(names, prefix, delim, after, max)
	if got := pageNames(pg); !slices.Equal(got, want) || pg.Truncated != truncated {
		t.Fatalf("prefix %q delim %q after %q max %d over %q:\ngot  %q truncated %v\nwant %q truncated %v",
			prefix, delim, after, max, names, got, pg.Truncated, want, truncated)
	}
	if truncated && pg.Next != want[len(want)-1] {
		t.Fatalf("next %q, want the page's last entry %q", pg.Next, want[len(want)-1])
	}
	if pc.Past() && len(want) > 0 {
		t.Fatalf("prefix %q after %q: Past, but the page holds %q", prefix, after, want)
	}
	start := pc.Start()
	for _, n := range names {
		if e, _ := entryOf(n, prefix, delim); e != "" && slices.Contains(want, e) && n < start {
			t.Fatalf("prefix %q delim %q after %q: %q (entry %q) sorts before Start %q", prefix, delim, after, n, e, start)
		}
	}
}

func TestPageCollector(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "/", "-", ".", "0", "~", "é", "😀", "Ａ"}
	word := func() string {
		var b strings.Builder
		for range 1 + r.IntN(5) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 3000 {
		var names []string
		for range r.IntN(12) {
			names = append(names, word())
		}
		slices.Sort(names)
		names = slices.Compact(names)
		prefix := ""
		if r.IntN(2) == 0 {
			prefix = string([]rune(word())[0])
		}
		delim := []string{"", "/", "~", "é", "/a"}[r.IntN(5)]
		after := ""
		switch r.IntN(3) {
		case 0:
			after = word()
		case 1:
			if len(names) > 0 {
				after = names[r.IntN(len(names))] // a key, or inside a group
			}
		}
		checkCollector(t, r, names, prefix, delim, after, 1+r.IntN(4))
	}
}

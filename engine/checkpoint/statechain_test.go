package checkpoint

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func stateFiles(names ...string) []StateFile {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var fs []StateFile
	for i, n := range names {
		sn, ok := ParseStateFileName(n)
		if !ok {
			panic(n)
		}
		fs = append(fs, StateFile{Key: "state/0/0/" + n, Name: sn, Modified: t0.Add(time.Duration(i) * time.Second)})
	}
	return fs
}

func TestWalkStateChain(t *testing.T) {
	versions, pick := NewStatePicker(stateFiles("1.delta", "2.delta", "2.snapshot", "3.delta", "4.delta", "5.delta", "5.snapshot", "7.delta"))
	walk := func(v int64) StateChain {
		return WalkStateChain(v, versions, func(v int64, b bool) string { return pick(v, b, "") })
	}
	for _, tc := range []struct {
		v       int64
		from    int64
		keys    []string
		problem string
	}{
		{v: 1, from: 0, keys: []string{"1.delta"}},
		{v: 2, from: 2, keys: []string{"2.snapshot"}},
		{v: 4, from: 2, keys: []string{"2.snapshot", "3.delta", "4.delta"}},
		{v: 6, from: 5, keys: []string{"5.snapshot"}, problem: "version 6 has no delta/changelog file (rebuilding 6 from snapshot 5)"},
		{v: 0},
	} {
		ch := walk(tc.v)
		var keys []string
		for _, k := range ch.Keys {
			keys = append(keys, strings.TrimPrefix(k, "state/0/0/"))
		}
		if ch.From != tc.from || !slices.Equal(keys, tc.keys) || ch.Problem != tc.problem {
			t.Errorf("version %d: %+v, want from %d keys %v problem %q", tc.v, ch, tc.from, tc.keys, tc.problem)
		}
	}
}

func TestLineageStateChain(t *testing.T) {
	_, pick := NewStatePicker(stateFiles("1_a.changelog", "2_b.zip", "2_b.changelog", "3_c.changelog", "3_x.changelog", "4_d.changelog"))
	lineage := []LineageEntry{{1, "a"}, {2, "b"}, {3, "c"}}
	ch := LineageStateChain("state/0/0/4_d.changelog", 4, lineage, pick)
	want := []string{"state/0/0/2_b.zip", "state/0/0/3_c.changelog", "state/0/0/4_d.changelog"}
	if ch.From != 2 || !slices.Equal(ch.Keys, want) || ch.Problem != "" {
		t.Errorf("lineage chain %+v, want from 2 %v", ch, want)
	}
	// a lineage entry that is not an earlier version never is the base
	ch = LineageStateChain("state/0/0/4_d.changelog", 4, append(lineage, LineageEntry{4, "d"}), pick)
	if ch.From != 2 {
		t.Errorf("hostile lineage: base %d, want 2", ch.From)
	}
	ch = LineageStateChain("state/0/0/4_d.changelog", 4, []LineageEntry{{3, "c"}}, pick)
	if !strings.Contains(ch.Problem, "has no version 1") {
		t.Errorf("lineage without a base: %+v", ch)
	}
}

func TestLinkedStateChain(t *testing.T) {
	listed := map[string]bool{"s/1.snapshot": true, "s/2.delta": true, "s/3.delta": true, "s/4.delta": true, "s/5.delta": true}
	links := map[string]StateLinks{
		"s/1.snapshot": {Base: true},
		"s/2.delta":    {Keys: []string{"s/1.snapshot"}},
		"s/3.delta":    {Keys: []string{"s/2.delta"}},
		"s/4.delta":    {Keys: []string{"s/4.delta"}}, // loops
		"s/5.delta":    {Keys: []string{"s/9.delta"}}, // names a missing file
	}
	chain := func(tip string, known func(string) bool) StateChain {
		return LinkedStateChain(tip, "commits/7", func(k string) bool { return listed[k] },
			func(k string) (StateLinks, string) {
				l, ok := links[k]
				if !ok {
					return l, k + " cannot be read"
				}
				return l, ""
			}, known)
	}
	ch := chain("s/3.delta", nil)
	if ch.From != 1 || !slices.Equal(ch.Keys, []string{"s/1.snapshot", "s/2.delta", "s/3.delta"}) || !slices.Equal(ch.By, []string{"s/2.delta", "s/3.delta", ""}) || ch.Problem != "" {
		t.Errorf("chain of s/3.delta: %+v", ch)
	}
	if ch := chain("s/3.delta", func(k string) bool { return k == "s/2.delta" }); !slices.Equal(ch.Keys, []string{"s/3.delta"}) || ch.Problem != "" {
		t.Errorf("chain stopping at a known key: %+v", ch)
	}
	for tip, want := range map[string]string{
		"s/4.delta": "s/4.delta: the chain of bases loops",
		"s/5.delta": "s/9.delta, named by s/5.delta, is missing",
		"s/8.delta": "s/8.delta, named by commits/7, is missing",
	} {
		if ch := chain(tip, nil); ch.Problem != want {
			t.Errorf("chain of %s: problem %q, want %q", tip, ch.Problem, want)
		}
	}
	links["s/3.delta"] = StateLinks{Keys: []string{"s/1.snapshot", "s/2.delta"}, Complete: true}
	if ch := chain("s/3.delta", nil); ch.From != 1 || !slices.Equal(ch.Keys, []string{"s/1.snapshot", "s/2.delta", "s/3.delta"}) || ch.Problem != "" {
		t.Errorf("complete links: %+v", ch)
	}
}

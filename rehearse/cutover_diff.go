package rehearse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/ckgate/ckgate/engine/compat"
)

// CutoverDiff reconciles the current run's output with the candidate's
// by business key.
type CutoverDiff struct {
	// Key names the business key columns ("" entries: the whole row).
	Key           []string `json:"key"`
	Equal         int64    `json:"equal"`
	OnlyCurrent   int64    `json:"only_current"`
	OnlyCandidate int64    `json:"only_candidate"`
	Changed       int64    `json:"changed"`
	// Rows name the differing rows (at most MaxNamedRows).
	Rows []DiffRow `json:"rows"`
}

// Same reports whether the two outputs hold the same rows.
func (d CutoverDiff) Same() bool { return d.OnlyCurrent == 0 && d.OnlyCandidate == 0 && d.Changed == 0 }

// DiffRow is one differing row: Side is "only_current", "only_candidate"
// or "changed" (Fields then names the columns that differ).
type DiffRow struct {
	Side      string   `json:"side"`
	Key       string   `json:"key"`
	Current   string   `json:"current,omitempty"`
	Candidate string   `json:"candidate,omitempty"`
	Fields    []string `json:"fields,omitempty"`
}

// ReconcileCutover compares the rows of the current run with the
// candidate's, grouped by business key (keyCols; none: the whole row).
// Within a key, equal rows match first; the rest pair up in order as
// changed, and what is left is only on one side. dupCur and dupCand count
// the rows beyond the first of a business key on each side (exact copies
// when the key is the whole row).
func ReconcileCutover(cur, cand []string, keyCols []string) (d CutoverDiff, dupCur, dupCand int64, err error) {
	type group struct{ cur, cand []string }
	groups := map[string]*group{}
	add := func(rows []string, cand bool) (int64, error) {
		var dups int64
		for _, r := range rows {
			c, k, err := canonicalRow([]byte(r), keyCols)
			if err != nil {
				return 0, err
			}
			g := groups[k]
			if g == nil {
				g = &group{}
				groups[k] = g
			}
			side := &g.cur
			if cand {
				side = &g.cand
			}
			if len(*side) > 0 {
				dups++
			}
			*side = append(*side, c)
		}
		return dups, nil
	}
	if dupCur, err = add(cur, false); err != nil {
		return d, 0, 0, fmt.Errorf("current output: %w", err)
	}
	if dupCand, err = add(cand, true); err != nil {
		return d, 0, 0, fmt.Errorf("candidate output: %w", err)
	}
	d.Rows = []DiffRow{}
	d.Key = append([]string{}, keyCols...)
	if len(d.Key) == 0 {
		d.Key = []string{"(whole row)"}
	}
	name := func(side, key, c, n string, fields []string) {
		if len(d.Rows) < MaxNamedRows {
			d.Rows = append(d.Rows, DiffRow{Side: side, Key: key, Current: c, Candidate: n, Fields: fields})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		sort.Strings(g.cur)
		sort.Strings(g.cand)
		var restCur, restCand []string
		i, j := 0, 0
		for i < len(g.cur) && j < len(g.cand) {
			switch {
			case g.cur[i] == g.cand[j]:
				d.Equal++
				i++
				j++
			case g.cur[i] < g.cand[j]:
				restCur = append(restCur, g.cur[i])
				i++
			default:
				restCand = append(restCand, g.cand[j])
				j++
			}
		}
		restCur = append(restCur, g.cur[i:]...)
		restCand = append(restCand, g.cand[j:]...)
		n := min(len(restCur), len(restCand))
		if len(keyCols) == 0 {
			n = 0 // the whole row is the key: a different row is another key
		}
		for x := range n {
			d.Changed++
			name("changed", k, restCur[x], restCand[x], changedFields(restCur[x], restCand[x]))
		}
		for _, r := range restCur[n:] {
			d.OnlyCurrent++
			name("only_current", k, r, "", nil)
		}
		for _, r := range restCand[n:] {
			d.OnlyCandidate++
			name("only_candidate", k, "", r, nil)
		}
	}
	return d, dupCur, dupCand, nil
}

// changedFields names the columns of two canonical rows that differ.
func changedFields(a, b string) []string {
	ma, mb := rawFields(a), rawFields(b)
	var out []string
	for _, k := range compat.UnionKeys(ma, mb) {
		x, xok := ma[k]
		y, yok := mb[k]
		if xok != yok || !bytes.Equal(x, y) {
			out = append(out, k)
		}
	}
	return out
}

func rawFields(row string) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal([]byte(row), &m)
	return m
}

// String summarises the reconciliation.
func (d CutoverDiff) String() string {
	s := fmt.Sprintf("by %s: %d equal, %d only in the current, %d only in the candidate, %d changed",
		strings.Join(d.Key, ", "), d.Equal, d.OnlyCurrent, d.OnlyCandidate, d.Changed)
	return s
}

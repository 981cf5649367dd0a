package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// closest is the name among names closest to typed, or "" when none is
// close: one is a prefix of the other, or at most a third of typed's
// letters (at least one, never all) differ.
func closest(typed string, names []string) string {
	best, bestD := "", -1
	for _, n := range names {
		if d := editDistance(typed, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	prefix := len(typed) >= 2 && (strings.HasPrefix(best, typed) || strings.HasPrefix(typed, best))
	if !prefix && (bestD > max(1, len(typed)/3) || bestD >= len(typed)) {
		return ""
	}
	return best
}

// didYouMean is ` (did you mean "store"?)` for the command or flag closest
// to typed, or "". A flag's dashes are not compared: -formt is --format.
func didYouMean(typed string, names []string, flag bool) string {
	if flag {
		typed = strings.TrimLeft(typed, "-")
	}
	best := closest(typed, names)
	switch {
	case best == "":
		return ""
	case flag && len(best) == 1:
		best = "-" + best
	case flag:
		best = "--" + best
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// commandNames are the names of the visible commands, and "help" where
// the group has it.
func commandNames(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return names
}

// flagNames are the names of the visible flags.
func flagNames(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		names = append(names, f.Names()...)
	}
	return names
}

// editDistance is the number of letters to insert, delete, replace or swap
// with the next one to turn a into b (optimal string alignment distance).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

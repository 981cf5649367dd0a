// Command benchsum prints the benchmark summary recorded by
// internal/benchsum as a plain table, one figure per line:
//
//	NAME                         VALUE  UNIT   GOAL
//	commit_requests_per_batch    3      req    <=3
//
// and exits 1, after a trailing "FAILED goals: …" line, when a figure misses
// its goal. Usage: benchsum FILE (or "-" for standard input). Exit status:
// 0 all goals met, 1 a goal missed, 2 usage or unreadable summary.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/ckgate/ckgate/internal/benchsum"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: benchsum FILE   (the file named by $"+benchsum.EnvVar+", or - for stdin)")
		return 2
	}
	in := stdin
	if args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			fmt.Fprintf(stderr, "benchsum: %v\n", err)
			return 2
		}
		defer f.Close()
		in = f
	}
	figs, err := benchsum.Read(in)
	if err != nil {
		fmt.Fprintf(stderr, "benchsum: %s: %v\n", args[0], err)
		return 2
	}
	if len(figs) == 0 {
		fmt.Fprintln(stdout, "benchsum: no figures recorded")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE\tUNIT\tGOAL")
	for _, f := range figs {
		unit, goal := f.Unit, f.Goal
		if unit == "" {
			unit = "-"
		}
		if goal == "" {
			goal = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, benchsum.FormatValue(f.Value), unit, goal)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "benchsum: %v\n", err)
		return 1
	}
	fails := benchsum.Check(figs)
	if len(fails) == 0 {
		return 0
	}
	parts := make([]string, len(fails))
	for i, f := range fails {
		parts[i] = fmt.Sprintf("%s (%s %s, %s)", f.Figure.Name, benchsum.FormatValue(f.Figure.Value), f.Figure.Unit, f.Reason)
	}
	fmt.Fprintf(stdout, "FAILED goals: %s\n", strings.Join(parts, ", "))
	return 1
}

package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// formatFlag is the --format flag of every report; setupCommand adds its
// --json shorthand.
func formatFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "format", Value: "table", Usage: "output `FORMAT`: table (or text) or json"}
}

// jsonFlag is --json, short for --format json, on every command with --format.
func jsonFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "json", Usage: "short for --format json"}
}

// addJSONFlag gives c --json when it has --format.
func addJSONFlag(c *cli.Command) {
	if findFlag(c.Flags, "format") != nil && findFlag(c.Flags, "json") == nil {
		c.Flags = append(c.Flags, jsonFlag())
	}
}

// argsFormat is args and format: a command's arguments and its --format.
func argsFormat(c *cli.Context, min, max int) ([]string, string, error) {
	a, err := args(c, min, max)
	if err != nil {
		return nil, "", err
	}
	f, err := format(c)
	if err != nil {
		return nil, "", err
	}
	return a, f, nil
}

// format is the --format of a table-or-json report.
func format(c *cli.Context) (string, error) { return formatOf(c, "table", "json") }

// formatOf is c's --format (or "json" for --json), one of names. "text"
// and "table" name the same format everywhere: either is accepted where
// names holds the other, and returned as the one names holds. An unset
// --format without a default is "".
func formatOf(c *cli.Context, names ...string) (string, error) {
	f := c.String("format")
	if c.Bool("json") {
		if c.IsSet("format") && f != "json" {
			return "", usageErrorf(c, "--json and --format %s: choose one", f)
		}
		return "json", nil
	}
	switch {
	case f == "" || slices.Contains(names, f):
		return f, nil
	case f == "text" && slices.Contains(names, "table"):
		return "table", nil
	case f == "table" && slices.Contains(names, "text"):
		return "text", nil
	}
	return "", usageErrorf(c, "--format %q: want %s", f, formatNames(names))
}

// formatNames lists names for a message: "table (or text), json or junit".
func formatNames(names []string) string {
	shown := make([]string, len(names))
	for i, n := range names {
		switch n {
		case "table":
			n = "table (or text)"
		case "text":
			n = "text (or table)"
		}
		shown[i] = n
	}
	if len(shown) == 1 {
		return shown[0]
	}
	return strings.Join(shown[:len(shown)-1], ", ") + " or " + shown[len(shown)-1]
}

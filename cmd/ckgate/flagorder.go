package main

import (
	"context"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// runApp runs app on args (args[0] is the program name) after orderArgs.
// Run and the tests that drive an App call it, so every command line goes
// through the same reordering.
// The completion flag the shell scripts append (see completion.go) stays
// last, where urfave/cli looks for it.
func runApp(ctx context.Context, app *cli.App, args []string) error {
	if n := len(args); n > 1 && args[n-1] == completionFlag {
		return app.RunContext(ctx, append(orderArgs(app, args[:n-1]), completionFlag))
	}
	return app.RunContext(ctx, orderArgs(app, args))
}

// completionFlag asks for the words that may follow (urfave/cli's
// EnableBashCompletion).
const completionFlag = "--generate-bash-completion"

// orderArgs lets flags go anywhere: urfave/cli stops parsing a command's
// flags at its first argument, so orderArgs rewrites args to put every flag
// in front of the arguments of the command that defines it:
//
//	ckgate inspect URL --format json --log-level debug
//	ckgate --log-level debug inspect --format json URL
//
// A flag is looked up in the command named so far (the help flag included),
// then in the app's flags; one that neither defines stays with the command,
// whose parser then refuses it as usual. A flag that takes a value takes the
// next token unless written --flag=value. "--" ends the flags: what follows
// is an argument however it looks, and "-" alone is an argument (stdin).
// With --help the arguments are dropped: the help is shown whatever they are.
func orderArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	root := slices.Clone(app.Flags)
	if cli.HelpFlag != nil && !app.HideHelp {
		root = append(root, cli.HelpFlag)
	}
	if cli.VersionFlag != nil && !app.HideVersion && app.Version != "" {
		root = append(root, cli.VersionFlag)
	}

	// levels[0] is the app, then one per command named; each holds the
	// command's name (empty for the app) and the flags it gets.
	type level struct {
		name  string
		flags []string
	}
	levels := []level{{}}
	var (
		cur         *cli.Command // nil: the app
		positionals []string
		dashdash    bool
		help        bool // the help flag of the last command named
	)
	subcommands := func() []*cli.Command {
		if cur == nil {
			return app.Commands
		}
		return cur.Subcommands
	}
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		tok := rest[i]
		if tok == "--" {
			dashdash = true
			positionals = append(positionals, rest[i+1:]...)
			break
		}
		if len(tok) < 2 || tok[0] != '-' {
			if len(positionals) == 0 {
				if sub := findCommand(subcommands(), tok); sub != nil {
					cur = sub
					levels = append(levels, level{name: tok})
					continue
				}
			}
			positionals = append(positionals, tok)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(tok, "-"), "-"), "=")
		at := len(levels) - 1
		var f cli.Flag
		if cur != nil {
			f = findFlag(cur.Flags, name)
			if f == nil && cli.HelpFlag != nil && !cur.HideHelp && slices.Contains(cli.HelpFlag.Names(), name) {
				f = cli.HelpFlag
			}
		}
		if f == nil {
			if f = findFlag(root, name); f != nil {
				at = 0
			}
		}
		if f == cli.HelpFlag && at == len(levels)-1 {
			help = true
		}
		levels[at].flags = append(levels[at].flags, tok)
		if f != nil && !hasValue && takesValue(f) && i+1 < len(rest) {
			i++
			levels[at].flags = append(levels[at].flags, rest[i])
		}
	}

	out := []string{args[0]}
	for _, l := range levels {
		if l.name != "" {
			out = append(out, l.name)
		}
		out = append(out, l.flags...)
	}
	if help && !dashdash {
		// urfave/cli reads an argument next to --help as a help topic
		return out
	}
	if dashdash {
		out = append(out, "--")
	}
	return append(out, positionals...)
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// takesValue reports whether f reads the next token as its value: every
// flag but a boolean one.
func takesValue(f cli.Flag) bool {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.TakesValue()
	}
	return true
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cpuguy83/go-md2man/v2/md2man"
	"github.com/urfave/cli/v2"
)

// docsCommand is `ckgate docs man DIR`: documentation made from the
// command tree itself.
func (e *env) docsCommand() *cli.Command {
	return &cli.Command{
		Name:  "docs",
		Usage: "write documentation made from the command definitions",
		Subcommands: []*cli.Command{{
			Name:      "man",
			Usage:     "write the man page ckgate.SECTION into DIR",
			ArgsUsage: "DIR",
			Description: "Writes DIR/ckgate.1 (or the --section given), made from the same command definitions as\n" +
				"--help: every command and subcommand with its flags, the EXAMPLES of each and the EXIT STATUS.\n" +
				"DIR is created when missing; a page already there is replaced (written to a temporary file in\n" +
				"DIR, then renamed over it). `make man` writes man/ckgate.1.",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "section", Value: 1, Usage: "manual `SECTION` (1 to 9)"},
			},
			Action: e.docsMan,
		}},
	}
}

func (e *env) docsMan(c *cli.Context) error {
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	section := c.Int("section")
	if section < 1 || section > 9 {
		return usageErrorf(c, "--section %d: want 1 to 9", section)
	}
	page, err := manPage(c.App, section)
	if err != nil {
		return err
	}
	dir := a[0]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &InputError{Err: fmt.Errorf("man page directory: %w", err)}
	}
	path := filepath.Join(dir, fmt.Sprintf("%s.%d", c.App.Name, section))
	if err := writeReplacing(path, page); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "wrote %s\n", path)
	return err
}

// manPage renders app's man page: urfave/cli's markdown of the command
// tree, then the EXAMPLES of every command and the EXIT STATUS.
func manPage(app *cli.App, section int) ([]byte, error) {
	d := docApp(app)
	d.Flags = app.Flags // --help and --version among the global options
	md, err := d.ToMarkdown()
	if err != nil {
		return nil, fmt.Errorf("man page: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%% %s %d\n\n", app.Name, section)
	b.WriteString(md)
	b.WriteString("\n# EXAMPLES\n\n")
	for _, name := range commandPaths(app.Commands, "") {
		ex := examples[name]
		if len(ex) == 0 {
			continue
		}
		title := app.Name
		if name != "" {
			title += " " + name
		}
		fmt.Fprintf(&b, "## %s\n\n", title)
		for _, x := range ex {
			fmt.Fprintf(&b, "%s:\n\n    %s\n\n", strings.ToUpper(x.what[:1])+x.what[1:], x.line)
		}
	}
	b.WriteString("# EXIT STATUS\n\n")
	for _, l := range strings.Split(strings.TrimSpace(exitStatusHelp), "\n")[1:] {
		code, text, _ := strings.Cut(strings.TrimSpace(l), " ")
		fmt.Fprintf(&b, "**%s**\n: %s\n\n", code, strings.TrimSpace(text))
	}
	return md2man.Render([]byte(b.String())), nil
}

// commandPaths are the full names of app (""), then of every visible
// command and subcommand, depth first in tree order.
func commandPaths(cmds []*cli.Command, prefix string) []string {
	out := []string{}
	if prefix == "" {
		out = append(out, "")
	}
	for _, c := range cmds {
		if c.Hidden || c.Name == "help" {
			continue
		}
		name := strings.TrimSpace(prefix + " " + c.Name)
		out = append(out, name)
		out = append(out, commandPaths(c.Subcommands, name)...)
	}
	return out
}

// writeReplacing writes data to path through a temporary file in its
// directory, fsynced and renamed over path: a reader sees the old page or
// the new one, never a part, and a symbolic link at path is replaced, not
// followed.
func writeReplacing(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return &InputError{Err: fmt.Errorf("write %s: %w", path, err)}
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

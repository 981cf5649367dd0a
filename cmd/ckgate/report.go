package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/cmd/ckgate/ui"
)

// reportCommand is `ckgate report --html FILE URL...`: the pages of
// `ckgate ui` as one file.
func (e *env) reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write the pages of `ckgate ui` for the checkpoints under URLs as one self-contained HTML file",
		ArgsUsage: "URL...",
		Description: "Reads every checkpoint under the URLs (found as `ckgate audit` finds them) and writes to\n" +
			"--html FILE the fleet page and the page of each checkpoint (every batch), as `ckgate ui` shows\n" +
			"them: one file, styles and script inline, no request to anywhere when opened; readable without\n" +
			"JavaScript, the fleet table sortable and filterable with it. FILE is replaced atomically (a temp\n" +
			"file beside it, then a rename): a failed report leaves the old one. Nothing is written to the\n" +
			"stores.\n\n" +
			"Exit status: 0 written (the findings are in the report); 2 a URL that cannot be opened or read,\n" +
			"or FILE that cannot be written.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "html", Usage: "write the report to `FILE` (required)"},
		}, policyFlags()...),
		Action: e.report,
	}
}

func (e *env) report(c *cli.Context) error {
	path := c.String("html")
	if path == "" {
		return usageErrorf(c, "--html FILE is required (the only format of report)")
	}
	l, done, err := e.uiLoader(c)
	if err != nil {
		return err
	}
	defer done()
	f, err := l.LoadFleet(c.Context)
	if err != nil {
		return &InputError{Err: err}
	}
	cps, err := l.LoadAll(c.Context, f)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return &InputError{Err: fmt.Errorf("--html %s: %w", path, err)}
	}
	defer os.Remove(tmp.Name())
	if err := ui.WriteReport(tmp, f, cps); err != nil {
		tmp.Close()
		return fmt.Errorf("--html %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("--html %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--html %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return &InputError{Err: fmt.Errorf("--html %s: %w", path, err)}
	}
	fmt.Fprintf(e.stdout, "wrote %s: %d checkpoint%s\n", path, len(cps), plural(len(cps)))
	return nil
}

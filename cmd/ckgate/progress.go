package main

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// progressFlag is --progress of the commands that show a progress bar
// (retention apply, archive, rehearse).
func progressFlag() cli.Flag {
	return &cli.BoolFlag{Name: "progress", Usage: "show a progress bar on stderr (default: when stderr is a terminal; --progress=false: never)"}
}

// progressBar is a bar on stderr, drawn from the first step (when the
// total is known: progressbar's spinner for an unknown total races with
// its own updates); a nil one shows nothing.
type progressBar struct {
	w    io.Writer
	what string
	bar  *progressbar.ProgressBar
}

// progressBar returns a bar of what is being done ("deleting") on stderr
// when it is a terminal or --progress asks for it, else nil: stderr stays
// clean for a log or a pipe.
func (e *env) progressBar(c *cli.Context, what string) *progressBar {
	show := c.Bool("progress")
	if !c.IsSet("progress") {
		f, ok := e.stderr.(*os.File)
		show = ok && term.IsTerminal(int(f.Fd()))
	}
	if !show {
		return nil
	}
	return &progressBar{w: e.stderr, what: what}
}

// set shows done of total steps, and the step under way when not "".
func (p *progressBar) set(done, total int, step string) {
	if p == nil {
		return
	}
	switch {
	case p.bar == nil:
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.what),
			progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish())
	case p.bar.GetMax() != total:
		p.bar.ChangeMax(total)
	}
	if step != "" {
		p.bar.Describe(p.what + " " + step)
	}
	_ = p.bar.Set(done)
}

// close clears the bar.
func (p *progressBar) close() {
	if p != nil && p.bar != nil {
		_ = p.bar.Close()
	}
}

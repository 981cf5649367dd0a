package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/cmd/ckgate/ui"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/policy"
)

// uiCommand is `ckgate ui URL...`: the pages of the checkpoints under the
// URLs, served to a browser on this machine.
func (e *env) uiCommand() *cli.Command {
	return &cli.Command{
		Name:      "ui",
		Usage:     "show the checkpoints under URLs in a browser: fleet, watermark gap, batches, state",
		ArgsUsage: "URL...",
		Description: "Serves, on --listen (127.0.0.1 and a free port by default), pages drawn from what each\n" +
			"checkpoint records, offline, for Spark's checkpoints and ckgate's: the fleet (every checkpoint\n" +
			"under the URLs, found as `ckgate audit` finds them, with inspect's status, watermark gap, state\n" +
			"and findings, sortable and filterable) and one page per checkpoint (charts of the watermark gap,\n" +
			"trigger interval, estimated batch duration, offsets per source and state bytes, the batch table,\n" +
			"state operators, findings; for ckgate's checkpoints also rows in and out, rates, late rows and\n" +
			"state rows recorded in commits/N). Nothing is written to the stores.\n\n" +
			"Only clients on this machine are answered, only with a Host header naming the listening\n" +
			"address (a DNS-rebinding page cannot read the stores through it), and only for the URLs given\n" +
			"and what lies under them (any other location is refused with 403). The address is printed,\n" +
			"and a browser is opened when one is available, unless --no-browser. `ckgate report --html`\n" +
			"writes the same pages to one file.\n\n" +
			"Exit status: 0 after an interrupt; 2 a URL that cannot be opened, or --listen in use.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:0", Usage: "serve on `HOST:PORT` (port 0: a free one)"},
			&cli.BoolFlag{Name: "no-browser", Usage: "print the address only; do not open a browser"},
		}, policyFlags()...),
		Action: e.ui,
	}
}

func (e *env) ui(c *cli.Context) error {
	l, done, err := e.uiLoader(c)
	if err != nil {
		return err
	}
	defer done()
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return &InputError{Err: fmt.Errorf("--listen %s: %w", c.String("listen"), err)}
	}
	addr := ln.Addr().String()
	srv := &http.Server{Handler: &ui.Server{Loader: l, Hosts: ui.AllowedHosts(addr)}, ReadHeaderTimeout: 10 * time.Second}
	page := "http://" + addr + "/"
	fmt.Fprintf(e.stdout, "ckgate ui: %s (%d URL%s; interrupt to stop)\n", page, len(l.Roots), plural(len(l.Roots)))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if !c.Bool("no-browser") {
		if err := openBrowser(page); err != nil {
			e.log.Info("no browser opened", "err", err)
		}
	}
	select {
	case err := <-served:
		return fmt.Errorf("ui on %s: %w", addr, err)
	case <-c.Context.Done():
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("ui: shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// uiLoader opens every URL argument and the audit policies; done closes
// the stores.
func (e *env) uiLoader(c *cli.Context) (*ui.Loader, func(), error) {
	urls, err := args(c, 1, 1<<16)
	if err != nil {
		return nil, nil, err
	}
	eng, err := e.policyEngine(c)
	if err != nil {
		return nil, nil, err
	}
	var stores []gateway.Store
	done := func() {
		for _, s := range stores {
			gateway.Close(s)
		}
	}
	l := &ui.Loader{Audit: func(ctx context.Context, t policy.Target) (*policy.Report, error) {
		return eng.Audit(ctx, []policy.Target{t}, policy.AuditOptions{})
	}}
	for _, raw := range urls {
		s, err := e.openStore(c.Context, c, raw)
		if err != nil {
			done()
			return nil, nil, err
		}
		stores = append(stores, s)
		r, err := ui.NewRoot(raw, s)
		if err != nil {
			done()
			return nil, nil, &InputError{Err: err}
		}
		l.Roots = append(l.Roots, r)
	}
	return l, done, nil
}

// openBrowser opens url with the desktop's opener, when there is one.
func openBrowser(url string) error {
	name := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "linux", "freebsd", "openbsd", "netbsd":
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return errors.New("no display")
		}
	default:
		return errors.New("no known opener on " + runtime.GOOS)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return err
	}
	cmd := exec.Command(p, url)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() //nolint:errcheck // the opener's status says nothing about the page
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
)

// storeCommand is the group of small commands a user debugging a
// checkpoint reaches for: ls, cat, put, rm, mb on any store URL.
func (e *env) storeCommand() *cli.Command {
	return &cli.Command{
		Name:      "store",
		UsageText: "ckgate store command [command options] URL [arguments...]",
		Usage:     "list, read, write and remove objects in a checkpoint store",
		Description: "URL is a store root: a plain path, file:///path, s3://bucket/prefix?region=R&endpoint=E&path_style=true,\n" +
			"gs://bucket/prefix or az://account/container/prefix. KEY is relative to it (offsets/0).\n" +
			"Credentials come from each cloud's usual environment; see README.md.",
		Subcommands: []*cli.Command{
			e.storeLsCommand(),
			e.storeCatCommand(),
			e.storePutCommand(),
			e.storeRmCommand(),
			e.storeMbCommand(),
		},
	}
}

// args checks the number of positional arguments of c: between min and
// max. Flags written after the arguments were moved in front of them by
// orderArgs; what is left is an argument, even after "--" when it looks like
// a flag.
func args(c *cli.Context, min, max int) ([]string, error) {
	a := c.Args().Slice()
	switch {
	case len(a) < min:
		return nil, usageErrorf(c, "want %s", c.Command.ArgsUsage)
	case len(a) > max:
		return nil, usageErrorf(c, "unexpected argument %q (want %s)", a[max], c.Command.ArgsUsage)
	}
	return a, nil
}

// openStore opens the store named by raw through the registry. A URL that
// does not parse or names an unknown scheme is a usage error; a backend
// that cannot open (credentials, network) is a failure.
func (e *env) openStore(ctx context.Context, c *cli.Context, raw string) (gateway.Store, error) {
	u, err := gateway.ParseURL(raw)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	if !slices.Contains(e.registry.Schemes(), u.Scheme) {
		return nil, usageErrorf(c, "store URL %q: unknown scheme %q (known: %s)",
			gateway.Redact(raw), u.Scheme, strings.Join(e.registry.Schemes(), ", "))
	}
	s, err := e.registry.Open(ctx, raw)
	if errors.Is(err, gateway.ErrInvalidURL) {
		return nil, &InputError{Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", gateway.Redact(raw), err)
	}
	e.log.Debug("store opened", "url", gateway.Redact(raw), "scheme", u.Scheme)
	if e.log.Enabled(ctx, slog.LevelDebug) {
		s = gateway.Intercept(s, e.logRequest)
	}
	return s, nil
}

// logRequest logs every store request at debug level.
func (e *env) logRequest(ctx context.Context, call gateway.Call, next func(context.Context) error) error {
	start := time.Now()
	err := next(ctx)
	attrs := []any{"op", string(call.Op), "key", call.Key, "took", time.Since(start).Round(time.Microsecond)}
	if call.Op.Mutates() {
		attrs = append(attrs, "cond", call.Cond.String())
	}
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	e.log.Debug("store request", attrs...)
	return err
}

// withStore opens raw, runs f and closes the store.
func (e *env) withStore(c *cli.Context, raw string, f func(gateway.Store) error) (err error) {
	s, err := e.openStore(c.Context, c, raw)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := gateway.Close(s); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", gateway.Redact(raw), cerr)
		}
	}()
	return f(s)
}

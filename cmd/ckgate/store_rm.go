package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
)

func (e *env) storeRmCommand() *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "remove one key",
		ArgsUsage: "URL KEY",
		Description: "Removes the object KEY under URL. A missing key exits 2. With --if-match the delete\n" +
			"only happens if KEY still has VERSION (as printed by ls or put); otherwise it exits 3." + storePolicyHelp,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "if-match", Usage: "remove only if the key's version is `VERSION`"},
		}, storePolicyFlags()...),
		Action: e.storeRm,
	}
}

func (e *env) storeRm(c *cli.Context) error {
	a, err := args(c, 2, 2)
	if err != nil {
		return err
	}
	cond := gateway.None()
	if c.IsSet("if-match") {
		v := c.String("if-match")
		if v == "" {
			return usageErrorf(c, "--if-match needs a version")
		}
		cond = gateway.IfMatch(gateway.Version(v))
	}
	return e.withStore(c, a[0], func(s gateway.Store) error {
		g, closeLog, err := e.guardStore(c, s, a[0])
		if err != nil {
			return err
		}
		defer closeLog()
		// a missing key is reported as missing (exit 2), under a
		// checkpoint too, rather than as a refusal to delete it
		if _, err := s.Stat(c.Context, a[1]); errors.Is(err, gateway.ErrNotFound) {
			return err
		}
		if err := g.Delete(c.Context, a[1], cond); err != nil {
			return refusalHint(c, err)
		}
		fmt.Fprintf(e.stdout, "removed %q\n", a[1])
		return nil
	})
}

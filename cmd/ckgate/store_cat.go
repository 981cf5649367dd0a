package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
)

func (e *env) storeCatCommand() *cli.Command {
	return &cli.Command{
		Name:        "cat",
		Usage:       "write an object's bytes to stdout",
		ArgsUsage:   "URL KEY",
		Description: "Streams the object KEY under URL to stdout, unchanged. A missing key exits 2.",
		Action:      e.storeCat,
	}
}

func (e *env) storeCat(c *cli.Context) error {
	a, err := args(c, 2, 2)
	if err != nil {
		return err
	}
	return e.withStore(c, a[0], func(s gateway.Store) error {
		rc, _, err := s.GetStream(c.Context, a[1])
		if err != nil {
			return err
		}
		defer rc.Close()
		if _, err := io.Copy(e.stdout, rc); err != nil {
			return fmt.Errorf("cat %q: %w", a[1], err)
		}
		return nil
	})
}

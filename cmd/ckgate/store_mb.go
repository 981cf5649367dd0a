package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
)

func (e *env) storeMbCommand() *cli.Command {
	return &cli.Command{
		Name:      "mb",
		Usage:     "create the bucket, container or root directory of a store URL",
		ArgsUsage: "URL",
		Description: "Creates what URL's store lives in: the directory of a local path, the S3 or GCS\n" +
			"bucket, the Azure container. Succeeds when it already exists. Meant for emulators,\n" +
			"test setups and demos; production buckets are usually made by infrastructure code.",
		Action: e.storeMb,
	}
}

func (e *env) storeMb(c *cli.Context) error {
	a, err := args(c, 1, 1)
	if err != nil {
		return err
	}
	return e.withStore(c, a[0], func(s gateway.Store) error {
		if err := gateway.MakeBucket(c.Context, s); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "ready: %s\n", gateway.Redact(a[0]))
		return nil
	})
}

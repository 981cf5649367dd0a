package main

import "github.com/urfave/cli/v2"

// concurrencyFlag is --concurrency N: how many keys or files a command
// copies, reads or deletes at a time (usage says which), def by default.
func concurrencyFlag(def int, usage string) cli.Flag {
	return &cli.IntFlag{Name: "concurrency", Value: def, Usage: usage}
}

// checkConcurrency refuses a --concurrency below 1 as a usage error.
func checkConcurrency(c *cli.Context) error {
	if n := c.Int("concurrency"); n < 1 {
		return usageErrorf(c, "--concurrency %d: want 1 or more", n)
	}
	return nil
}

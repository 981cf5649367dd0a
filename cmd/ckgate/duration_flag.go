package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine/spec"
)

// durationValue is a duration flag's value in the spec's syntax: Go's
// ("90s", "1h30m") plus whole days ("3d"). A bare number is refused: a
// flag states its unit.
type durationValue struct{ d time.Duration }

func (v *durationValue) Set(s string) error {
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return fmt.Errorf("%q has no unit: write e.g. 90s, 72h or 3d", s)
	}
	d, err := spec.ParseDuration(s)
	if err != nil {
		return err
	}
	v.d = d.D()
	return nil
}

func (v *durationValue) String() string {
	if v == nil {
		return ""
	}
	return v.d.String()
}

// durationFlag is a duration flag that takes days too (3d). Read it with
// flagDuration.
func durationFlag(name string, def time.Duration, usage string) *cli.GenericFlag {
	return &cli.GenericFlag{Name: name, Value: &durationValue{d: def}, Usage: usage, DefaultText: durationText(def)}
}

// durationText is a default for help: "" for none.
func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// flagDuration is the value of the duration flag name.
func flagDuration(c *cli.Context, name string) time.Duration {
	if v, ok := c.Generic(name).(*durationValue); ok && v != nil {
		return v.d
	}
	return 0
}

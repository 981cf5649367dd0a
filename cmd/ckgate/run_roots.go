package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/policy"
)

// lookBelowLimit bounds the keys `run` lists below a new checkpoint root
// looking for a checkpoint inside it.
const lookBelowLimit = 10000

// nestedRootError is a checkpoint root inside another checkpoint's tree,
// or above one: a conflict (exit 3), refused before anything is written.
type nestedRootError struct {
	URL   string // the root as the user typed it
	Root  string // its canonical location
	Other string // the other checkpoint's root
	Above bool   // Root is above Other (else inside it)
}

func (e *nestedRootError) Error() string {
	rel := "inside the tree of"
	if e.Above {
		rel = "above"
	}
	return fmt.Sprintf("checkpoint %s (%s) is %s checkpoint %s: two checkpoints in one tree mix their files (the other query's restarts, "+
		"retention and audits would count them as its own); choose a directory outside any checkpoint and with none below it (nothing was written)",
		gateway.Redact(e.URL), e.Root, rel, e.Other)
}

func (e *nestedRootError) Unwrap() error { return gateway.ErrInUse }

// checkRunRoot refuses, before anything is written, a checkpoint root that
// lies inside another checkpoint's tree (a root above it) or above one (a
// root below it, looked for through cp, at most lookBelowLimit keys), and
// warns on a non-empty directory that is not a checkpoint. It needs no
// policy data: the stores say where the checkpoints are.
func (e *env) checkRunRoot(c *cli.Context, cp gateway.Store, ckURL string) error {
	ctx := c.Context
	root, err := gateway.CanonicalRoot(ckURL)
	if err != nil {
		return &InputError{Err: err}
	}
	curl, err := gateway.ContainerURL(ckURL)
	if err != nil {
		return &InputError{Err: err}
	}
	var top gateway.Store
	if curl != "" {
		if top, err = e.openStore(ctx, c, curl); err != nil {
			return err
		}
		defer gateway.Close(top)
	}
	above, err := policy.NewRootFinder(policy.ContainerOf(root), top).Above(ctx, root)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", gateway.Redact(ckURL), err)
	}
	if len(above) > 0 {
		return &nestedRootError{URL: ckURL, Root: root, Other: above[len(above)-1]}
	}
	below, err := policy.LookBelow(ctx, cp, lookBelowLimit)
	if err != nil {
		return fmt.Errorf("checkpoint %s: looking for a checkpoint below it: %w", gateway.Redact(ckURL), err)
	}
	switch {
	case below.Root != "":
		return &nestedRootError{URL: ckURL, Root: root, Other: gateway.JoinLocation(root, below.Root), Above: true}
	case !below.Self && below.Entries > 0:
		more := ""
		if below.Truncated {
			more = fmt.Sprintf(" (looked at the first %d keys)", lookBelowLimit)
		}
		fmt.Fprintf(e.stderr, "ckgate: warning: checkpoint %s is a non-empty directory that is not a checkpoint%s: the query's files will sit beside what it holds\n",
			root, more)
	}
	return nil
}

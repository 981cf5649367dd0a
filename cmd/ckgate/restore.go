package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/output"
	"github.com/ckgate/ckgate/lifecycle"
	"github.com/ckgate/ckgate/policy"
)

// restoreCommand is `ckgate restore ARCHIVE DEST`.
func (e *env) restoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "restore a checkpoint from an archive (made by ckgate archive) into an empty root, verified",
		ArgsUsage: "ARCHIVE DEST",
		Description: "Checks every file of ARCHIVE against its manifest (" + lifecycle.ManifestKey + ": size and SHA-256,\n" +
			"nothing missing or extra) and refuses a difference, naming the file, before anything is written.\n" +
			"Then copies every file, create-only, into DEST, which must be empty: first " + lifecycle.RestoreKey + ",\n" +
			"then every file but metadata, re-reads them all against the manifest, then metadata, then\n" +
			lifecycle.RestoredKey + ". A restore that stops part-way leaves DEST without metadata and\n" +
			lifecycle.RestoredKey + ": `ckgate run` refuses it, and the same restore run again completes it.\n" +
			"Every write is decided by the policy as an archive principal (create-only inside DEST).\n\n" +
			"Exit status: 0 restored and verified; 1 the archive differs from its manifest, or a copy\n" +
			"failed (DEST is marked incomplete); 2 ARCHIVE is not an archive or unreadable; 3 DEST not empty\n" +
			"(or restored already); 4 denied by policy.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "principal", Usage: "who restores, recorded and given to the policy (default: the OS user)"},
			concurrencyFlag(8, "copy and check `N` files at a time"),
			decisionLogFlag(),
			formatFlag(),
		}, policyFlags()...),
		Action: e.restore,
	}
}

func (e *env) restore(c *cli.Context) error {
	a, f, err := argsFormat(c, 2, 2)
	if err != nil {
		return err
	}
	if err := checkConcurrency(c); err != nil {
		return err
	}
	if err := apart(c, "ARCHIVE", a[0], "DEST", a[1]); err != nil {
		return err
	}
	eng, log, closeLog, err := e.policyAndLog(c)
	if err != nil {
		return err
	}
	defer closeLog()
	ctx := c.Context
	arc, err := e.openStore(ctx, c, a[0])
	if err != nil {
		return err
	}
	defer gateway.Close(arc)
	dst, err := e.openStore(ctx, c, a[1])
	if err != nil {
		return err
	}
	defer gateway.Close(dst)
	gdst, done, err := e.guardArchive(c, eng, log, dst, a[1])
	if err != nil {
		return err
	}
	defer done()
	opts := lifecycle.RestoreOptions{
		Archive: a[0], Dest: a[1], Concurrency: c.Int("concurrency"),
		Principal: lifecycle.Principal{ID: principalID(c), Kind: policy.KindArchive},
	}
	opts.MakeRoot = func(ctx context.Context) error { return stores.MakeLocalRoot(ctx, a[1], dst) }
	res, err := lifecycle.Restore(ctx, arc, gdst, opts)
	if err := loggedError(log, err); err != nil {
		return archiveReadError(a[0], err)
	}
	m := res.Manifest
	if f == "json" {
		return output.JSON(e.stdout, restoreJSON{Archive: gateway.Redact(a[0]), Dest: gateway.Redact(a[1]), QueryID: m.QueryID,
			Files: m.Files, Bytes: m.Bytes, Copied: res.Copied, Kept: res.Kept, Verified: true,
			ManifestSHA256: res.ManifestSHA256, DurationMs: res.Duration.Milliseconds()})
	}
	fmt.Fprintf(e.stdout, "restored %s → %s: %d files, %s (query %s), verified (size and SHA-256 of every file) in %s\n",
		gateway.Redact(a[0]), gateway.Redact(a[1]), res.Copied+res.Kept, bytesText(m.Bytes), output.Dash(m.QueryID), res.Duration.Round(1e6))
	if res.Kept > 0 {
		fmt.Fprintf(e.stdout, "completed an earlier restore: %d files were in place already, %d copied now\n", res.Kept, res.Copied)
	}
	fmt.Fprintf(e.stdout, "next: ckgate inspect %s\n", gateway.Redact(a[1]))
	return nil
}

// archiveReadError types an error reading the archive at raw: no manifest
// is not an archive (exit 2).
func archiveReadError(raw string, err error) error {
	if errors.Is(err, lifecycle.ErrNotArchive) {
		return &InputError{Err: fmt.Errorf("%s: %w", gateway.Redact(raw), err)}
	}
	return err
}

type restoreJSON struct {
	Archive        string `json:"archive"`
	Dest           string `json:"dest"`
	QueryID        string `json:"query_id"`
	Files          int    `json:"files"`
	Bytes          int64  `json:"bytes"`
	Copied         int    `json:"copied"`
	Kept           int    `json:"kept"`
	Verified       bool   `json:"verified"`
	ManifestSHA256 string `json:"manifest_sha256"`
	DurationMs     int64  `json:"duration_ms"`
}

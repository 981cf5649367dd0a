package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/output"
	"github.com/ckgate/ckgate/lifecycle"
)

// archiveVerifyCommand is `ckgate archive verify ARCHIVE`.
func (e *env) archiveVerifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check every file of an archive against its manifest",
		ArgsUsage: "ARCHIVE",
		Description: "Reads the manifest (" + lifecycle.ManifestKey + ") of ARCHIVE, made by ckgate archive, lists ARCHIVE\n" +
			"and re-reads every file: a file the manifest lists and ARCHIVE lacks (missing), a file ARCHIVE\n" +
			"holds and the manifest does not list (extra), and a size or SHA-256 that differs are findings,\n" +
			"each naming the file. Nothing is written.\n\n" +
			"Exit status: 0 every file matches; 1 findings; 2 not an archive, a manifest that does not\n" +
			"parse, or an archive that cannot be read.",
		Flags: []cli.Flag{
			concurrencyFlag(8, "read `N` files at a time"),
			formatFlag(),
		},
		Action: e.archiveVerify,
	}
}

type archiveVerifyJSON struct {
	Archive    string               `json:"archive"`
	QueryID    string               `json:"query_id"`
	Files      int                  `json:"files"`
	Bytes      int64                `json:"bytes"`
	OK         bool                 `json:"ok"`
	Mismatches []lifecycle.Mismatch `json:"mismatches"`
}

func (e *env) archiveVerify(c *cli.Context) error {
	a, f, err := argsFormat(c, 1, 1)
	if err != nil {
		return err
	}
	if err := checkConcurrency(c); err != nil {
		return err
	}
	return e.withStore(c, a[0], func(st gateway.Store) error {
		m, bad, err := lifecycle.VerifyArchive(c.Context, st, c.Int("concurrency"))
		if err != nil {
			return &InputError{Err: fmt.Errorf("%s: %w", gateway.Redact(a[0]), err)}
		}
		if f == "json" {
			if err := output.JSON(e.stdout, archiveVerifyJSON{Archive: gateway.Redact(a[0]), QueryID: m.QueryID, Files: len(m.Entries),
				Bytes: m.Bytes, OK: len(bad) == 0, Mismatches: append([]lifecycle.Mismatch{}, bad...)}); err != nil {
				return err
			}
		} else {
			if len(bad) == 0 {
				fmt.Fprintf(e.stdout, "archive %s: %d files, %s (query %s): every file matches the manifest (size and SHA-256)\n",
					gateway.Redact(a[0]), len(m.Entries), bytesText(m.Bytes), output.Dash(m.QueryID))
				return nil
			}
			fmt.Fprintf(e.stdout, "archive %s: %d of %d files differ from the manifest: restoring it is refused\n", gateway.Redact(a[0]), len(bad), len(m.Entries))
			t := output.NewTable(e.stdout)
			t.Row("PROBLEM", "KEY", "MANIFEST", "ARCHIVE")
			for _, b := range bad {
				t.Row(b.Problem, b.Key, output.Dash(b.Want), output.Dash(b.Got))
			}
			if err := t.Flush(); err != nil {
				return err
			}
		}
		if len(bad) > 0 {
			return &FindingsError{Count: len(bad), What: "files differ from the archive manifest (first: " + bad[0].String() + ")"}
		}
		return nil
	})
}

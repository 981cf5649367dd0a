package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/output"
	"github.com/ckgate/ckgate/lifecycle"
	"github.com/ckgate/ckgate/policy"
)

// archiveCommand is `ckgate archive URL DEST [--fresh-start]`.
func (e *env) archiveCommand() *cli.Command {
	return &cli.Command{
		Name:        "archive",
		Usage:       "copy a checkpoint, verified, to another store; with --fresh-start mark it archived; verify an archive",
		ArgsUsage:   "URL DEST",
		UsageText:   "ckgate archive [command options] URL DEST\nckgate archive verify [command options] ARCHIVE",
		Subcommands: []*cli.Command{e.archiveVerifyCommand()},
		Description: "Copies every key of the checkpoint at URL, byte for byte, to DEST (any store to any store;\n" +
			"create-only writes), re-lists DEST and compares every key's size and SHA-256 with the source,\n" +
			"then writes the manifest (keys, sizes, SHA-256) to DEST/_ckgate/archive-manifest.json. The\n" +
			"source is not changed. A DEST that already holds any key is refused (exit 3): a second archive\n" +
			"to the same DEST never mixes two copies. Stop the query first: a live ckgate writer is refused.\n\n" +
			"--fresh-start --reason TEXT then writes URL/_ckgate/archived.json (create-only): DEST, the time,\n" +
			"the principal, the reason and --new URL (the new root, which must be empty). The old checkpoint is kept as it is, never deleted. Run the query\n" +
			"on a new, empty checkpoint root afterwards:\n\n" +
			"   ckgate run SPEC --checkpoint NEW_URL\n\n" +
			"A root already archived for a fresh start is refused (exit 3). Every write (to DEST and the\n" +
			"marker) is decided by the policy as principal --principal of kind housekeeping, which may write\n" +
			"but never delete under a checkpoint root; --decision-log records the decisions.\n\n" +
			"ckgate archive verify ARCHIVE checks an archive against its manifest later; ckgate restore\n" +
			"ARCHIVE DEST copies it back, verified, into an empty root.\n\n" +
			"Exit status: 0 archived and verified; 1 a copy or verification failure; 2 not a checkpoint or\n" +
			"unreadable; 3 DEST not empty, the root already archived, or a live writer; 4 denied by policy.",
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "fresh-start", Usage: "mark URL archived (to DEST) so the query starts on a new root"},
			&cli.StringFlag{Name: "new", Usage: "with --fresh-start: the new, empty checkpoint root `URL` the query runs on (recorded in the marker)"},
			&cli.StringFlag{Name: "reason", Usage: "why (required with --fresh-start): recorded in the marker and manifest"},
			&cli.StringFlag{Name: "principal", Usage: "who archives, recorded and given to the policy (default: the OS user)"},
			concurrencyFlag(8, "copy `N` keys at a time"),
			progressFlag(),
			decisionLogFlag(),
			formatFlag(),
		}, policyFlags()...),
		Action: e.archive,
	}
}

// location is the canonical location of a store URL (gateway.CanonicalRoot),
// for telling whether two URLs name one root; raw itself when it has none.
func location(raw string) string {
	loc, err := gateway.CanonicalRoot(raw)
	if err != nil {
		return raw
	}
	return loc
}

// copyError is the outcome of a copy from src (archive, fresh-start): its
// error, or else the decision log's (loggedError); a source that is not a
// checkpoint is unreadable input.
func copyError(log *policy.DecisionLog, src string, err error) error {
	err = loggedError(log, err)
	if errors.Is(err, checkpoint.ErrNotCheckpoint) {
		return &InputError{Err: fmt.Errorf("%s: %w", gateway.Redact(src), err)}
	}
	return err
}

// apart refuses (usage error) locations of one copy that overlap: given as
// name, URL, name, URL, ..., every pair must be neither equal nor nested,
// compared canonically (lifecycle.CheckApart): an archive inside its own
// source would copy itself. It runs before any store is opened or made.
func apart(c *cli.Context, named ...string) error {
	for i := 0; i+1 < len(named); i += 2 {
		for j := i + 2; j+1 < len(named); j += 2 {
			if err := lifecycle.CheckApart(named[i], named[i+1], named[j], named[j+1]); err != nil {
				return &UsageError{Command: helpName(c), Err: err}
			}
		}
	}
	return nil
}

func (e *env) archive(c *cli.Context) error {
	a, f, err := argsFormat(c, 2, 2)
	if err != nil {
		return err
	}
	fresh, reason := c.Bool("fresh-start"), strings.TrimSpace(c.String("reason"))
	if fresh && reason == "" {
		return usageErrorf(c, "--fresh-start needs --reason TEXT (recorded in %s)", lifecycle.ArchivedKey)
	}
	if err := checkConcurrency(c); err != nil {
		return err
	}
	newRoot := c.String("new")
	if newRoot != "" && !fresh {
		return usageErrorf(c, "--new needs --fresh-start")
	}
	locs := []string{"URL", a[0], "DEST", a[1]}
	if newRoot != "" {
		locs = append(locs, "--new", newRoot)
	}
	hk, closeAll, err := e.housekeepingCopy(c, locs...)
	if err != nil {
		return err
	}
	defer closeAll()
	ctx, p, eng, log, src := c.Context, hk.principal, hk.eng, hk.log, hk.src
	dst, err := e.openStore(ctx, c, a[1])
	if err != nil {
		return err
	}
	defer gateway.Close(dst)
	if err := stores.MakeLocalRoot(ctx, a[1], dst); err != nil {
		return fmt.Errorf("archive destination %s: %w", gateway.Redact(a[1]), err)
	}
	var newStore gateway.Store
	if newRoot != "" {
		if newStore, err = e.openStore(ctx, c, newRoot); err != nil {
			return err
		}
		defer gateway.Close(newStore)
	}
	src, dst, done, err := e.guardCopy(c, p, eng, log, src, a[0], dst, a[1])
	if err != nil {
		return err
	}
	defer done()
	bar := e.progressBar(c, "copying")
	res, err := lifecycle.Archive(ctx, src, dst, lifecycle.ArchiveOptions{
		Source: a[0], Dest: a[1], FreshStart: fresh, Reason: reason, NewRoot: newRoot, NewStore: newStore,
		Principal:   lifecycle.Principal{ID: p.ID, Kind: p.Kind},
		Concurrency: c.Int("concurrency"),
		Progress:    func(done, total int) { bar.set(done, total, "") },
	})
	bar.close()
	if err := copyError(log, a[0], err); err != nil {
		return err
	}
	if f == "json" {
		return output.JSON(e.stdout, archiveSummary(res))
	}
	m := res.Manifest
	fmt.Fprintf(e.stdout, "archived %s → %s: %d files, %s, verified (size and SHA-256 of every key) in %s (%.1f MB/s)\n",
		m.Source, m.Dest, m.Files, bytesText(m.Bytes), res.Duration.Round(1e6), float64(m.Bytes)/1e6/max(res.Duration.Seconds(), 1e-9))
	if res.ManifestWritten {
		fmt.Fprintf(e.stdout, "manifest %s (sha256 %s)\n", lifecycle.ManifestKey, res.ManifestSHA256)
	} else {
		fmt.Fprintf(e.stdout, "the source is itself an archive: its manifest was copied and kept\n")
	}
	if res.Marker != nil {
		fmt.Fprintf(e.stdout, "marked %s archived (%s) by %s: %s\n", m.Source, lifecycle.ArchivedKey, res.Marker.Principal.ID, res.Marker.Reason)
		next := "NEW_URL"
		if res.Marker.NewRoot != "" {
			next = res.Marker.NewRoot
		}
		fmt.Fprintf(e.stdout, "next: run the query on the new, empty checkpoint root: ckgate run SPEC --checkpoint %s\n", next)
		fmt.Fprintf(e.stdout, "      (the old root is kept; write the new run's output apart from the old one and reconcile)\n")
	}
	return nil
}

type archiveJSON struct {
	Source          string                    `json:"source"`
	Dest            string                    `json:"dest"`
	Files           int                       `json:"files"`
	Bytes           int64                     `json:"bytes"`
	DurationMs      int64                     `json:"duration_ms"`
	Verified        bool                      `json:"verified"`
	ManifestKey     string                    `json:"manifest_key"`
	ManifestSHA256  string                    `json:"manifest_sha256"`
	ManifestWritten bool                      `json:"manifest_written"`
	Marker          *lifecycle.ArchivedRecord `json:"archived,omitempty"`
}

func archiveSummary(r *lifecycle.ArchiveResult) archiveJSON {
	return archiveJSON{Source: r.Manifest.Source, Dest: r.Manifest.Dest, Files: r.Manifest.Files, Bytes: r.Manifest.Bytes,
		DurationMs: r.Duration.Milliseconds(), Verified: true, ManifestKey: lifecycle.ManifestKey, ManifestSHA256: r.ManifestSHA256,
		ManifestWritten: r.ManifestWritten, Marker: r.Marker}
}

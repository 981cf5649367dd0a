package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/source"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/output"
	"github.com/ckgate/ckgate/lifecycle"
)

// freshStartCommand is `ckgate fresh-start URL --new URL --archive-to DEST
// (--from-offsets JSON | --from-timestamp T) --reason TEXT`.
func (e *env) freshStartCommand() *cli.Command {
	return &cli.Command{
		Name:      "fresh-start",
		Usage:     "archive a checkpoint and start its query on a new root at a Kafka or files boundary",
		ArgsUsage: "URL",
		Description: "Archives the checkpoint at URL to --archive-to DEST (as `ckgate archive --fresh-start`: verified\n" +
			"copy, then URL/_ckgate/archived.json), then starts the new, empty root --new at a boundary.\n" +
			"Kafka source: --from-offsets '{\"topic\":{\"0\":42}}' (Spark's offsets), or --from-timestamp T\n" +
			"(RFC 3339: each partition's first record at or after T, asked of --brokers); the query's first\n" +
			"run on NEW reads them as its initial offsets. Files source: --from-timestamp T (files modified at\n" +
			"or after T are new input, older ones are treated as processed), or --from-offsets\n" +
			"'{\"logOffset\":N}' | '{\"batch\":N}' (the files URL's file source log recorded up to log offset N,\n" +
			"or up to the end of batch N, are carried over as processed) | '{\"files\":[\"a.json\",…]}'; the\n" +
			"source skips them on every run on NEW. The boundary goes to NEW/_ckgate/start.json; the\n" +
			"migration (old root, archive, new root, boundary, who, when, why) is recorded in both roots\n" +
			"(NEW/_ckgate/migrated-from.json, URL/_ckgate/migrated-to.json). URL is kept, never deleted;\n" +
			"`ckgate run` on it is refused from now on. The steps left to the operator (isolated output,\n" +
			"reconciliation) are printed.\n\n" +
			"Exit status: 0 done; 1 a copy, verification or Kafka failure; 2 a usage error, not a checkpoint\n" +
			"or unreadable; 3 DEST or NEW not empty, URL already archived, or a live writer; 4 denied by policy.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "new", Usage: "the new, empty checkpoint root `URL` (required)"},
			&cli.StringFlag{Name: "archive-to", Usage: "where the old checkpoint is archived: an empty store `URL` (required)"},
			&cli.StringFlag{Name: "from-offsets", Usage: "the boundary as `JSON`: Kafka {\"topic\":{\"partition\":offset}}; files {\"logOffset\":N}, {\"batch\":N} or {\"files\":[…]}"},
			&cli.StringFlag{Name: "from-timestamp", Usage: "the boundary as a `TIME` (RFC 3339): Kafka, the first record at or after it; files, those modified at or after it"},
			&cli.StringFlag{Name: "brokers", Usage: "with --from-timestamp: Kafka `HOST:PORT` list, comma-separated"},
			&cli.StringFlag{Name: "topic", Usage: "with --from-timestamp: the `TOPIC` (default: the one in URL's _ckgate/plan.json)"},
			&cli.StringFlag{Name: "reason", Usage: "why (required): recorded in both roots"},
			&cli.StringFlag{Name: "principal", Usage: "who, recorded and given to the policy (default: the OS user)"},
			concurrencyFlag(8, "copy `N` keys at a time"),
			decisionLogFlag(),
			formatFlag(),
		}, policyFlags()...),
		Action: e.freshStart,
	}
}

func (e *env) freshStart(c *cli.Context) error {
	a, f, err := argsFormat(c, 1, 1)
	if err != nil {
		return err
	}
	newRoot, dest := c.String("new"), c.String("archive-to")
	reason := strings.TrimSpace(c.String("reason"))
	switch {
	case newRoot == "":
		return usageErrorf(c, "--new URL is required: the new checkpoint root")
	case dest == "":
		return usageErrorf(c, "--archive-to URL is required: where the old checkpoint is archived")
	case reason == "":
		return usageErrorf(c, "--reason TEXT is required (recorded in both roots)")
	case (c.String("from-offsets") == "") == (c.String("from-timestamp") == ""):
		return usageErrorf(c, "give one boundary: --from-offsets JSON or --from-timestamp TIME")
	}
	if err := checkConcurrency(c); err != nil {
		return err
	}
	hk, closeAll, err := e.housekeepingCopy(c, "URL", a[0], "--archive-to", dest, "--new", newRoot)
	if err != nil {
		return err
	}
	defer closeAll()
	ctx, p, eng, log, src := c.Context, hk.principal, hk.eng, hk.log, hk.src
	start, ts, err := e.boundary(c, src)
	if err != nil {
		return err
	}
	roots := map[string]gateway.Store{}
	for _, raw := range []string{dest, newRoot} {
		st, err := e.openStore(ctx, c, raw)
		if err != nil {
			return err
		}
		defer gateway.Close(st)
		if err := stores.MakeLocalRoot(ctx, raw, st); err != nil {
			return fmt.Errorf("%s: %w", gateway.Redact(raw), err)
		}
		roots[raw] = st
	}
	src, gdest, done, err := e.guardCopy(c, p, eng, log, src, a[0], roots[dest], dest)
	if err != nil {
		return err
	}
	defer done()
	gnew, doneNew, err := e.guardArchive(c, eng, log, roots[newRoot], newRoot)
	if err != nil {
		return err
	}
	defer doneNew()
	roots[dest], roots[newRoot] = gdest, gnew
	res, err := lifecycle.FreshStart(ctx, src, roots[dest], roots[newRoot], lifecycle.FreshStartOptions{
		Source: a[0], Dest: dest, NewRoot: newRoot, Start: start, FromTimestamp: ts,
		Principal: lifecycle.Principal{ID: p.ID, Kind: p.Kind}, Reason: reason, Concurrency: c.Int("concurrency"),
	})
	if err := copyError(log, a[0], err); err != nil {
		return err
	}
	if f == "json" {
		return output.JSON(e.stdout, struct {
			Archive   archiveJSON               `json:"archive"`
			Migration lifecycle.MigrationRecord `json:"migration"`
			Steps     []string                  `json:"steps"`
		}{archiveSummary(res.Archive), res.Migration, res.Steps})
	}
	m := res.Migration
	fmt.Fprintf(e.stdout, "archived %s → %s: %d files, verified; marked archived (%s)\n", m.OldRoot, m.ArchivedTo, res.Archive.Manifest.Files, lifecycle.ArchivedKey)
	fmt.Fprintf(e.stdout, "new root %s starts at %s", m.NewRoot, lifecycle.DescribeStart(m.Boundary))
	if m.FromTimestamp != nil && m.Boundary.Files == nil {
		fmt.Fprintf(e.stdout, " (the first records at or after %s)", m.FromTimestamp.Format(time.RFC3339Nano))
	}
	fmt.Fprintf(e.stdout, " (%s)\n", source.StartKey)
	fmt.Fprintf(e.stdout, "migration recorded in both roots (%s, %s) by %s: %s\n", lifecycle.MigratedToKey, lifecycle.MigratedFromKey, m.Principal.ID, m.Reason)
	fmt.Fprintln(e.stdout, "left to you:")
	for i, s := range res.Steps {
		fmt.Fprintf(e.stdout, "  %d. %s\n", i+1, s)
	}
	return nil
}

// boundary resolves --from-offsets or --from-timestamp (with --brokers
// and --topic) against the checkpoint at src into the new root's start
// point (and the time, for the latter).
func (e *env) boundary(c *cli.Context, src gateway.Store) (source.StartPoint, *time.Time, error) {
	req := lifecycle.StartRequest{Offsets: c.String("from-offsets"), Topic: c.String("topic")}
	if raw := c.String("from-timestamp"); raw != "" {
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			return source.StartPoint{}, nil, usageErrorf(c, "--from-timestamp %q: want RFC 3339 (2026-11-30T12:00:00Z)", raw)
		}
		req.Timestamp = &t
	}
	for _, b := range strings.Split(c.String("brokers"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			req.Brokers = append(req.Brokers, b)
		}
	}
	start, err := lifecycle.ResolveStart(c.Context, src, req)
	var be *lifecycle.BoundaryError
	switch {
	case errors.As(err, &be):
		flag := map[string]string{"Offsets": "--from-offsets", "Timestamp": "--from-timestamp", "Brokers": "--brokers", "Topic": "--topic"}[be.Field]
		return source.StartPoint{}, nil, usageErrorf(c, "%s: %v", flag, err)
	case errors.Is(err, lifecycle.ErrBadBoundary):
		return source.StartPoint{}, nil, usageErrorf(c, "%v", err)
	case errors.Is(err, checkpoint.ErrCorrupt) || errors.Is(err, checkpoint.ErrUnsupportedVersion):
		return source.StartPoint{}, nil, &InputError{Err: err}
	case err != nil:
		return source.StartPoint{}, nil, err
	}
	return start, req.Timestamp, nil
}

// archivedError: `ckgate run` on a root archived for a fresh start. It is
// gateway.ErrInUse for the exit status (3): the query runs elsewhere now.
type archivedError struct {
	err error
}

func (e *archivedError) Error() string   { return e.err.Error() }
func (e *archivedError) Unwrap() []error { return []error{e.err, gateway.ErrInUse} }

// checkNotArchived refuses a checkpoint root archived for a fresh start,
// naming the root the query runs on now.
func checkNotArchived(ctx context.Context, cp gateway.Store, ckURL string) error {
	rec, err := lifecycle.CheckNotArchived(ctx, cp)
	if err == nil {
		return nil
	}
	if rec == nil {
		return err
	}
	if rec.NewRoot == "" {
		return &archivedError{err: fmt.Errorf("checkpoint %s: %w", gateway.Redact(ckURL), err)}
	}
	return &archivedError{err: fmt.Errorf("checkpoint %s: %w; the query now runs on %s: ckgate run SPEC --checkpoint %s",
		gateway.Redact(ckURL), err, rec.NewRoot, rec.NewRoot)}
}

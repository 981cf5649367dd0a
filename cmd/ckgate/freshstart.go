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
			&cli.IntFlag{Name: "concurrency", Value: 8, Usage: "copy `N` keys at a time"},
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
	case c.Int("concurrency") <= 0:
		return usageErrorf(c, "--concurrency %d: want a positive number", c.Int("concurrency"))
	}
	if err := apart(c, "URL", a[0], "--archive-to", dest, "--new", newRoot); err != nil {
		return err
	}
	p, eng, log, closeLog, err := e.housekeeping(c)
	if err != nil {
		return err
	}
	defer closeLog()
	ctx := c.Context
	src, err := e.openStore(ctx, c, a[0])
	if err != nil {
		return err
	}
	defer gateway.Close(src)
	start, ts, err := e.boundary(c, src)
	if err != nil {
		return err
	}
	stores := map[string]gateway.Store{}
	for _, raw := range []string{dest, newRoot} {
		st, err := e.openStore(ctx, c, raw)
		if err != nil {
			return err
		}
		defer gateway.Close(st)
		if u, _ := gateway.ParseURL(raw); u != nil && u.Scheme == "file" {
			if err := gateway.MakeBucket(ctx, st); err != nil {
				return fmt.Errorf("%s: %w", gateway.Redact(raw), err)
			}
		}
		stores[raw] = st
	}
	src, gdest, done, err := e.guardCopy(c, p, eng, log, src, a[0], stores[dest], dest)
	if err != nil {
		return err
	}
	defer done()
	gnew, doneNew, err := e.guardArchive(c, eng, log, stores[newRoot], newRoot)
	if err != nil {
		return err
	}
	defer doneNew()
	stores[dest], stores[newRoot] = gdest, gnew
	res, err := lifecycle.FreshStart(ctx, src, stores[dest], stores[newRoot], lifecycle.FreshStartOptions{
		Source: a[0], Dest: dest, NewRoot: newRoot, Start: start, FromTimestamp: ts,
		Principal: lifecycle.Principal{ID: p.ID, Kind: p.Kind}, Reason: reason, Concurrency: c.Int("concurrency"),
	})
	if lerr := log.Err(); lerr != nil && err == nil {
		err = fmt.Errorf("decision log: %w", lerr)
	}
	switch {
	case errors.Is(err, checkpoint.ErrNotCheckpoint):
		return &InputError{Err: fmt.Errorf("%s: %w", gateway.Redact(a[0]), err)}
	case err != nil:
		return err
	}
	if f == "json" {
		return printJSON(e.stdout, struct {
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

// boundary resolves --from-offsets or --from-timestamp into the new root's
// start point (and the time, for the latter).
func (e *env) boundary(c *cli.Context, src gateway.Store) (source.StartPoint, *time.Time, error) {
	kind, _, err := lifecycle.PlannedSource(c.Context, src)
	if err != nil {
		return source.StartPoint{}, nil, &InputError{Err: err}
	}
	if kind == "files" {
		return e.filesBoundary(c, src)
	}
	if raw := c.String("from-offsets"); raw != "" && kind == "" {
		// A Spark checkpoint records no source kind: a files boundary
		// says it.
		if _, err := lifecycle.ParseFilesBoundary(raw); err == nil {
			return e.filesBoundary(c, src)
		}
	}
	if raw := c.String("from-offsets"); raw != "" {
		m, err := checkpoint.DecodeKafkaOffsets(raw)
		if err != nil || len(m) == 0 {
			return source.StartPoint{}, nil, usageErrorf(c, "--from-offsets %q: want Spark's Kafka offsets {\"topic\":{\"partition\":offset}} (%v)", raw, err)
		}
		kind, topic, err := planSource(c.Context, src)
		if err != nil {
			return source.StartPoint{}, nil, err
		}
		if kind != "" && kind != "kafka" {
			return source.StartPoint{}, nil, usageErrorf(c, "a fresh-start boundary is for a Kafka or files source; the checkpoint reads a %s source", kind)
		}
		if topic != "" {
			if _, ok := m[topic]; !ok || len(m) != 1 {
				return source.StartPoint{}, nil, usageErrorf(c, "--from-offsets names %s; the checkpoint reads topic %s", strings.Join(mapsKeys(m), ", "), topic)
			}
		}
		return source.StartPoint{Kafka: m}, nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, c.String("from-timestamp"))
	if err != nil {
		return source.StartPoint{}, nil, usageErrorf(c, "--from-timestamp %q: want RFC 3339 (2026-11-30T12:00:00Z)", c.String("from-timestamp"))
	}
	var brokers []string
	for _, b := range strings.Split(c.String("brokers"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			brokers = append(brokers, b)
		}
	}
	if len(brokers) == 0 {
		return source.StartPoint{}, nil, usageErrorf(c, "--from-timestamp needs --brokers HOST:PORT")
	}
	kind, topic, err := planSource(c.Context, src)
	if err != nil {
		return source.StartPoint{}, nil, err
	}
	if kind != "" && kind != "kafka" {
		return source.StartPoint{}, nil, usageErrorf(c, "a fresh-start boundary is for a Kafka or files source; the checkpoint reads a %s source", kind)
	}
	if t := c.String("topic"); t != "" {
		topic = t
	}
	if topic == "" {
		return source.StartPoint{}, nil, usageErrorf(c, "--from-timestamp: the checkpoint records no Kafka topic (%s): give --topic", checkpoint.PlanKey)
	}
	offs, err := lifecycle.KafkaOffsetsAfter(c.Context, brokers, topic, t)
	if err != nil {
		return source.StartPoint{}, nil, err
	}
	return source.StartPoint{Kafka: map[string]map[int32]int64{topic: offs}}, &t, nil
}

// filesBoundary resolves --from-offsets or --from-timestamp for a files
// source into the new root's start point.
func (e *env) filesBoundary(c *cli.Context, src gateway.Store) (source.StartPoint, *time.Time, error) {
	if c.String("brokers") != "" || c.String("topic") != "" {
		return source.StartPoint{}, nil, usageErrorf(c, "--brokers and --topic are for a Kafka source; the checkpoint reads a files source")
	}
	var (
		from lifecycle.FilesFrom
		ts   *time.Time
	)
	if raw := c.String("from-offsets"); raw != "" {
		f, err := lifecycle.ParseFilesBoundary(raw)
		if err != nil {
			return source.StartPoint{}, nil, usageErrorf(c, "--from-offsets: the checkpoint reads a files source: want {\"logOffset\":N}, {\"batch\":N} or {\"files\":[…]}: %v", err)
		}
		from = f
	} else {
		t, err := time.Parse(time.RFC3339Nano, c.String("from-timestamp"))
		if err != nil {
			return source.StartPoint{}, nil, usageErrorf(c, "--from-timestamp %q: want RFC 3339 (2026-11-30T12:00:00Z)", c.String("from-timestamp"))
		}
		ts = &t
	}
	fs, err := lifecycle.FilesBoundary(c.Context, src, from, ts)
	if errors.Is(err, lifecycle.ErrBadBoundary) {
		return source.StartPoint{}, nil, usageErrorf(c, "%v", err)
	}
	if err != nil {
		return source.StartPoint{}, nil, err
	}
	return source.StartPoint{Files: fs}, ts, nil
}

// planSource returns the source kind and Kafka topic recorded in the
// checkpoint's plan ("" when it has no plan: a Spark checkpoint); a plan
// that does not decode is unreadable input.
func planSource(ctx context.Context, st gateway.Store) (kind, topic string, err error) {
	kind, fields, err := lifecycle.PlannedSource(ctx, st)
	if errors.Is(err, checkpoint.ErrCorrupt) || errors.Is(err, checkpoint.ErrUnsupportedVersion) {
		return "", "", &InputError{Err: err}
	}
	return kind, fields["topic"], err
}

func mapsKeys(m map[string]map[int32]int64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
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

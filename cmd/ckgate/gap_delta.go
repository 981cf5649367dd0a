package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/output"
	"github.com/ckgate/ckgate/lifecycle"
)

// deltaFlag is --delta [N=]TABLE_URL, the Delta table a source reads (a
// Delta offset records the table's id, not its location).
func deltaFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "delta", Usage: "the Delta table a Delta source reads: `[N=]TABLE_URL` (N: the source id, when there are several; repeatable)"}
}

// sourcePrefix is "N=" before a table URL (a URL may hold '=' itself, as
// in part=0/, so only a leading run of digits counts).
var sourcePrefix = regexp.MustCompile(`^([0-9]+)=(.+)$`)

// icebergFlag is gap's --iceberg [N=]TABLE_URL.
func icebergFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "iceberg", Usage: "the Iceberg table an Iceberg source reads: `[N=]TABLE_URL` (repeatable)"}
}

// deltaTables reads the --delta flags; two locations for one source are a
// usage error.
func deltaTables(c *cli.Context) (lifecycle.TableLocations, error) { return tableFlags(c, "delta") }

// tableFlags reads the [N=]TABLE_URL values of flag name.
func tableFlags(c *cli.Context, name string) (lifecycle.TableLocations, error) {
	out := lifecycle.TableLocations{}
	for _, v := range c.StringSlice(name) {
		v = strings.TrimSpace(v)
		id, url := "", v
		if m := sourcePrefix.FindStringSubmatch(v); m != nil {
			id, url = m[1], m[2]
		}
		if url == "" {
			return nil, usageErrorf(c, "--%s %q: want [N=]TABLE_URL", name, v)
		}
		if old, ok := out[id]; ok {
			what := "every source"
			if id != "" {
				what = "source " + id
			}
			return nil, usageErrorf(c, "--%s names two tables for %s: %s and %s", name, what, gateway.Redact(old), gateway.Redact(url))
		}
		out[id] = url
	}
	return out, nil
}

// openerFor opens table locations the way the command's own URL is opened
// (unknown schemes and bad URLs are usage errors).
func (e *env) openerFor(c *cli.Context) func(context.Context, string) (gateway.Store, error) {
	return func(ctx context.Context, raw string) (gateway.Store, error) { return e.openStore(ctx, c, raw) }
}

// deltaInputError maps what the Delta reader refuses to read (not a table,
// a corrupt log, a protocol it cannot read) to an InputError (exit 2).
func deltaInputError(err error) error {
	if errors.Is(err, delta.ErrNotDelta) || errors.Is(err, delta.ErrCorrupt) || errors.Is(err, delta.ErrUnsupportedProtocol) {
		return &InputError{Err: err}
	}
	return nil
}

// writeDeltaGap prints the verdict of one Delta source.
func writeDeltaGap(w io.Writer, table string, r *delta.ResumeReport) {
	fmt.Fprintf(w, "  table %s: %s\n", table, strings.ToUpper(r.Status))
	start := ""
	if r.IsStartingVersion {
		start = " (inside its initial snapshot)"
	}
	fmt.Fprintf(w, "  resumes at version %d%s; table id %s (checkpoint read %s); versions %d..%d replayable\n",
		r.ResumeVersion, start, output.Dash(r.TableID), output.Dash(r.CheckpointID), r.EarliestVersion, r.LatestVersion)
	if r.IDChangedAt != nil {
		fmt.Fprintf(w, "  the id changed at version %d\n", *r.IDChangedAt)
	}
	if m := r.MissingVersions; m != nil {
		fmt.Fprintf(w, "  MISSING versions %d..%d of the log\n", m[0], m[1])
	}
	const show = 20
	for i, m := range r.Missing {
		if i == show {
			fmt.Fprintf(w, "  ... and %d more missing files (--format json lists them)\n", len(r.Missing)-show)
			break
		}
		fmt.Fprintf(w, "  MISSING %s (added at version %d)\n", printableKey(m.Path), m.Version)
	}
	if len(r.Unchecked) > 0 {
		fmt.Fprintf(w, "  note: %d files outside the table not checked, e.g. %s\n", len(r.Unchecked), gateway.Redact(r.Unchecked[0]))
	}
	if r.Reason != "" {
		fmt.Fprintf(w, "  %s\n", r.Reason)
	}
}

// writeIcebergGap prints the verdict of one Iceberg source.
func writeIcebergGap(w io.Writer, table string, g *lifecycle.IcebergGap) {
	cur := "none"
	if g.CurrentSnapshotID != nil {
		cur = fmt.Sprint(*g.CurrentSnapshotID)
	}
	fmt.Fprintf(w, "  table %s: %s\n  resumes at snapshot %d; current snapshot %s (%s, table uuid %s)\n", table, strings.ToUpper(g.Status), g.SnapshotID, cur, g.MetadataFile, output.Dash(g.TableUUID))
	if g.Reason != "" {
		fmt.Fprintf(w, "  %s\n", g.Reason)
	}
}

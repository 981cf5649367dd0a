package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/output"
	"github.com/ckgate/ckgate/lifecycle"
)

// gapCommand is `ckgate gap URL`: can the sources still replay what the
// checkpoint resumes from?
func (e *env) gapCommand() *cli.Command {
	return &cli.Command{
		Name:      "gap",
		Usage:     "check that the sources still hold what a checkpoint resumes from",
		ArgsUsage: "URL",
		Description: "Reads the checkpoint at URL without changing it and compares where it resumes (the end offsets\n" +
			"of the latest committed batch; an in-flight batch is re-read from there up to its own end offsets)\n" +
			"with what the sources can still replay.\n\n" +
			"Kafka (--kafka BROKERS, comma-separated), per partition: ok; gap (EXPIRED records between the\n" +
			"resume offset and the earliest retained one were deleted by retention); ahead (the checkpoint's\n" +
			"offset is beyond the end: the topic was truncated or re-created); identity-changed (the topic id\n" +
			"or cluster id differs from _ckgate/plan.json: the topic was deleted and re-created); missing (the\n" +
			"topic or partition is gone); new (a partition the checkpoint does not know, read from its start:\n" +
			"not a problem). A Spark checkpoint has no plan file: its topic identity is unknown, and the report\n" +
			"says so. File sources: files recorded for an in-flight batch, or recorded and not yet in a batch,\n" +
			"that no longer exist.\n\n" +
			"Delta sources (--delta TABLE_URL, or --delta N=TABLE_URL per source id: the checkpoint records the\n" +
			"table's id, not its location): ok; gap (log versions or data files a restart reads are gone: log\n" +
			"cleanup or VACUUM; the earliest version that can be replayed is named); identity-changed (the table\n" +
			"at the location has another id: replaced, e.g. CREATE OR REPLACE); ahead (the checkpoint is past the\n" +
			"latest version + 1); catalog-managed (the log on storage cannot tell). See docs/delta.md. Iceberg\n" +
			"sources (--iceberg [N=]TABLE_URL): ok when the offset's snapshot is the current snapshot or an\n" +
			"ancestor of it; gap when the table no longer lists it (expired); identity-changed otherwise.\n\n" +
			"Exit status: 0 no gap; 1 any gap, ahead, identity-changed, catalog-managed or missing; 2 not a\n" +
			"checkpoint, unreadable, a Kafka checkpoint without --kafka, or a Delta one without --delta.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kafka", Usage: "Kafka seed `BROKERS` (host:port,...)"},
			deltaFlag(),
			icebergFlag(),
			formatFlag(),
		},
		Action: e.gap,
	}
}

func (e *env) gap(c *cli.Context) error {
	a, f, err := argsFormat(c, 1, 1)
	if err != nil {
		return err
	}
	var brokers []string
	for _, b := range strings.Split(c.String("kafka"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			brokers = append(brokers, b)
		}
	}
	tables, err := deltaTables(c)
	if err != nil {
		return err
	}
	icebergs, err := tableFlags(c, "iceberg")
	if err != nil {
		return err
	}
	opts := lifecycle.GapOptions{Brokers: brokers, Delta: tables, Iceberg: icebergs, Open: func(ctx context.Context, raw string) (gateway.Store, error) {
		return e.registry.Open(ctx, raw)
	}}
	return e.withStore(c, a[0], func(s gateway.Store) error {
		rep, err := lifecycle.Gap(c.Context, s, opts)
		switch {
		case errors.Is(err, checkpoint.ErrNotCheckpoint):
			return &InputError{Err: fmt.Errorf("%s: %w", gateway.Redact(a[0]), err)}
		case errors.Is(err, lifecycle.ErrNoBrokers):
			return usageErrorf(c, "%s: %v: give --kafka BROKERS", gateway.Redact(a[0]), err)
		case errors.Is(err, lifecycle.ErrNoIcebergTable):
			return usageErrorf(c, "%s: %v: give --iceberg TABLE_URL (or --iceberg N=TABLE_URL)", gateway.Redact(a[0]), err)
		case errors.Is(err, lifecycle.ErrNotIceberg):
			return &InputError{Err: err}
		case errors.Is(err, lifecycle.ErrNoDeltaTable):
			return usageErrorf(c, "%s: %v: give --delta TABLE_URL (or --delta N=TABLE_URL)", gateway.Redact(a[0]), err)
		case errors.Is(err, checkpoint.ErrCorrupt):
			return &InputError{Err: err}
		case deltaInputError(err) != nil:
			return deltaInputError(err)
		case err != nil:
			return fmt.Errorf("gap %s: %w", gateway.Redact(a[0]), err)
		}
		if err := render(e.stdout, f, rep, func() error { return writeGapTable(e, gateway.Redact(a[0]), rep) }); err != nil {
			return err
		}
		if !rep.OK() {
			return &FindingsError{Count: rep.Problems, What: "partitions or files the sources can no longer replay"}
		}
		return nil
	})
}

func writeGapTable(e *env, url string, r *lifecycle.GapReport) error {
	t := output.NewTable(e.stdout)
	t.Row("CHECKPOINT", url)
	t.Row("STATUS", r.Status)
	resume := "the initial offsets (no committed batch)"
	if r.ResumeFrom != nil {
		resume = fmt.Sprintf("the end offsets of committed batch %d", *r.ResumeFrom)
	}
	if r.InFlight != nil {
		resume += fmt.Sprintf("; in-flight batch %d is re-read up to its end offsets", *r.InFlight)
	}
	t.Row("RESUMES FROM", resume)
	verdict := "OK: the sources still hold everything a restart reads"
	if !r.OK() {
		verdict = fmt.Sprintf("GAP: %d partitions or files cannot be replayed", r.Problems)
	}
	t.Row("VERDICT", verdict)
	if a := r.Archived; a != nil {
		t.Row("ARCHIVED", fmt.Sprintf("to %s at %s by %s (%s): run the query on a new checkpoint root",
			a.ArchivedTo, a.Time.Format(time.RFC3339), a.Principal.ID, a.Reason))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, s := range r.Sources {
		fmt.Fprintf(e.stdout, "\nSOURCE %s (%s)", s.ID, s.Kind)
		if s.Kind == "kafka" && s.Identity != nil {
			fmt.Fprintf(e.stdout, " plan: cluster %s topic %s id %s", output.Dash(s.Identity["cluster_id"]), output.Dash(s.Identity["topic"]), output.Dash(s.Identity["topic_id"]))
		}
		if s.Note != "" {
			fmt.Fprintf(e.stdout, "\n  note: %s", s.Note)
		}
		fmt.Fprintln(e.stdout)
		if len(s.Partitions) > 0 {
			t := output.NewTable(e.stdout).Indent("  ")
			t.Row("TOPIC", "PARTITION", "STATUS", "RESUME", "UNTIL", "START", "END", "EXPIRED", "AHEAD")
			for _, p := range s.Partitions {
				status := p.Status
				if len(p.Problems) > 1 {
					status = strings.Join(p.Problems, ",")
				}
				until := "-"
				if p.Until != nil {
					until = strconv.FormatInt(*p.Until, 10)
				}
				t.Row(p.Topic, p.Partition, status, p.Resume, until, offText(p.Start), offText(p.End), p.Expired, p.Ahead)
			}
			if err := t.Flush(); err != nil {
				return err
			}
		}
		if s.Delta != nil {
			writeDeltaGap(e.stdout, s.Table, s.Delta)
		}
		if s.Iceberg != nil {
			writeIcebergGap(e.stdout, s.Table, s.Iceberg)
		}
		if fg := s.Files; fg != nil {
			fmt.Fprintf(e.stdout, "  file log offset committed %d; %d files still to read, %d missing\n", fg.Committed, fg.Needed, len(fg.Missing))
			for _, m := range fg.Missing {
				fmt.Fprintf(e.stdout, "  MISSING %s (log batch %d, %s)\n", m.Path, m.LogBatch, m.Use)
			}
		}
	}
	return nil
}

func offText(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/output"
	"github.com/ckgate/ckgate/policy"
)

// auditCommand is `ckgate audit URL…`: checkpoints against the storage
// rules that delete them.
func (e *env) auditCommand() *cli.Command {
	return &cli.Command{
		Name:      "audit",
		Usage:     "audit checkpoints against lifecycle rules, Delta tables, shared paths and bucket protections",
		ArgsUsage: "URL...",
		Description: "Finds every checkpoint under each URL (a metadata file with offsets/ beside it: Spark's and\n" +
			"ckgate's) and evaluates the audit rules (`ckgate policy rules`): lifecycle expiration or archive\n" +
			"covering a checkpoint, rules shorter than the outage window, checkpoints inside a Delta table\n" +
			"that VACUUM deletes, equal or nested roots of two queries, object lock, no versioning or soft\n" +
			"delete, and rules that could not be read (unknown, never a pass).\n\n" +
			"Lifecycle configuration comes from --lifecycle files, in the JSON the clouds print:\n" +
			"  aws s3api get-bucket-lifecycle-configuration | get-bucket-versioning | get-object-lock-configuration\n" +
			"  gcloud storage buckets describe --format=json, the JSON API bucket resource, or {\"rule\": [...]}\n" +
			"  az storage account management-policy show | blob-service-properties show, or the ARM resource\n" +
			"A file applies to every URL; BUCKET=FILE applies it to one bucket or Azure container. A cloud URL\n" +
			"whose bucket no file covers has its configuration read from the store when the backend can,\n" +
			"and is reported unknown otherwise. A local directory is audited as a bucket of its own.\n\n" +
			"--delta TABLE_URL names a Delta table the checkpoints may read (a checkpoint records a Delta\n" +
			"source's table id, not its location; it is matched by id; with --delta given, the Delta tables\n" +
			"under the audited URLs are read too): its VACUUM and log retention must\n" +
			"cover the outage window (CKG-A012), and log cleanup disabled on a table that is written to is a\n" +
			"warning (CKG-A013). See docs/delta.md.\n\n" +
			"Exit status: 0 clean (warnings allowed unless --fail-on-warn), 1 deny or unknown findings,\n" +
			"2 could not audit (a URL that cannot be listed, a file or policy that cannot be read).",
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "lifecycle", Usage: "read bucket configuration from `[BUCKET=]FILE` (repeatable)"},
			durationFlag("outage-window", policy.DefaultOutageWindow, "the longest a query may stay stopped and still restart from its checkpoint (e.g. 72h, 3d)"),
			&cli.BoolFlag{Name: "fail-on-warn", Usage: "exit 1 on warnings too"},
			auditDeltaFlag(),
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output `FORMAT`: table (or text), json, junit or sarif"},
		}, policyFlags()...),
		Action: e.audit,
	}
}

func (e *env) audit(c *cli.Context) error {
	urls, err := args(c, 1, 1<<20)
	if err != nil {
		return err
	}
	f, err := formatOf(c, "table", "json", "junit", "sarif")
	if err != nil {
		return err
	}
	window := flagDuration(c, "outage-window")
	if window <= 0 {
		return usageErrorf(c, "--outage-window %s: want a positive duration such as 72h", window)
	}
	buckets, err := readLifecycle(c.StringSlice("lifecycle"))
	if err != nil {
		return err
	}
	eng, err := e.policyEngine(c)
	if err != nil {
		return err
	}
	var targets []policy.Target
	for _, raw := range urls {
		s, err := e.openStore(c.Context, c, raw)
		if err != nil {
			return couldNotAudit(err)
		}
		defer gateway.Close(s)
		targets = append(targets, policy.Target{URL: raw, Store: s})
	}
	tables, err := e.auditDeltaTables(c, targets)
	if err != nil {
		return couldNotAudit(err)
	}
	rep, err := eng.Audit(c.Context, targets, policy.AuditOptions{OutageWindow: window, Buckets: buckets, SinkOwner: e.sinkOwnerOf(c),
		DeltaTables: tables, DeltaSources: deltaSourcesOf})
	if err != nil {
		return couldNotAudit(err)
	}
	switch f {
	case "json":
		err = output.JSON(e.stdout, rep)
	case "junit":
		var b []byte
		if b, err = rep.JUnit(); err == nil {
			_, err = e.stdout.Write(b)
		}
	case "sarif":
		var b []byte
		if b, err = rep.SARIF(eng.Rules()); err == nil {
			_, err = e.stdout.Write(b)
		}
	default:
		err = writeAuditTable(e, rep)
	}
	if err != nil {
		return err
	}
	if rep.Failed(c.Bool("fail-on-warn")) {
		n := rep.Count(policy.SeverityDeny) + rep.Count(policy.SeverityUnknown)
		if c.Bool("fail-on-warn") {
			n += rep.Count(policy.SeverityWarn)
		}
		return &FindingsError{Count: n, What: "audit findings (" + rep.Summary() + ")"}
	}
	return nil
}

// couldNotAudit marks an error that stopped the audit: exit 2, whatever
// the store said, since no finding can be trusted.
func couldNotAudit(err error) error {
	var ue *UsageError
	if errors.As(err, &ue) {
		return err
	}
	return &InputError{Err: fmt.Errorf("could not audit: %w", err)}
}

// readLifecycle parses every --lifecycle [BUCKET=]FILE.
func readLifecycle(specs []string) ([]policy.Bucket, error) {
	var out []policy.Bucket
	for _, spec := range specs {
		bucket, file := "", spec
		if name, rest, ok := strings.Cut(spec, "="); ok && !strings.ContainsAny(name, `/\`) {
			if _, err := os.Stat(spec); err != nil { // a file named "a=b" wins
				bucket, file = name, rest
			}
		}
		data, err := gateway.ReadRegularFile(file, 0)
		if err != nil {
			return nil, &InputError{Err: fmt.Errorf("--lifecycle: %w", err)}
		}
		b, err := policy.ParseLifecycle(file, data)
		if err != nil {
			return nil, &InputError{Err: fmt.Errorf("--lifecycle: %w", err)}
		}
		if bucket != "" {
			b.Bucket = bucket
		}
		out = append(out, b)
	}
	return out, nil
}

func writeAuditTable(e *env, rep *policy.Report) error {
	t := output.NewTable(e.stdout)
	if len(rep.Findings) > 0 {
		t.Row("SEVERITY", "RULE", "RESOURCE", "MESSAGE")
	}
	for _, f := range rep.Findings {
		t.Row(strings.ToUpper(f.Severity), f.ID+" "+f.Name, f.Resource, f.Msg)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(e.stdout, "%s (outage window %dh)\n", rep.Summary(), rep.OutageWindowHours)
	return err
}

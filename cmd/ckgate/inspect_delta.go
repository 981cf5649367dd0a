package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/gateway"
)

// lakeOffsetText is a Delta or Iceberg source offset in a table cell.
func lakeOffsetText(o checkpoint.SourceOffset) string {
	switch {
	case o.Delta != nil:
		return o.Delta.String()
	case o.Iceberg != nil:
		s := fmt.Sprintf("iceberg snapshot %d position %d", o.Iceberg.SnapshotID, o.Iceberg.Position)
		if o.Iceberg.ScanAllFiles {
			s += " (scan all files)"
		}
		return s
	}
	return o.Kind + " " + o.JSON
}

// isDeltaTable reports whether s holds a Delta table (a _delta_log/ with
// anything in it): inspect --sink then reconciles with the table's txn
// instead of reading a file sink's _spark_metadata.
func isDeltaTable(ctx context.Context, s gateway.Store) (bool, error) {
	for _, err := range s.List(ctx, delta.LogDir) {
		if err != nil {
			return false, fmt.Errorf("list %s: %w", delta.LogDir, err)
		}
		return true, nil
	}
	return false, nil
}

// FindingDeltaSinkUnknown: the in-flight batch's outcome in a Delta sink
// cannot be told (see delta.SinkUnknown).
const FindingDeltaSinkUnknown = "delta-sink-unknown"

// deltaSink reconciles the checkpoint of rep with the Delta table in s
// (at url): by the checkpoint's query id, or appID (foreachBatch's
// txnAppId) when set. An unknown outcome is added to rep as an error
// finding.
func deltaSink(ctx context.Context, s gateway.Store, url string, rep *checkpoint.Report, appID string) (*delta.SinkReport, error) {
	t, err := delta.Open(ctx, s, url)
	if err != nil {
		return nil, fmt.Errorf("Delta sink %s: %w", gateway.Redact(url), err)
	}
	snap, err := t.Snapshot(ctx, -1)
	if err != nil {
		return nil, fmt.Errorf("Delta sink %s: %w", gateway.Redact(url), err)
	}
	if appID == "" {
		appID = rep.QueryID
	}
	if appID == "" {
		return nil, &InputError{Err: fmt.Errorf("the checkpoint records no query id (metadata): give --txn-app-id for the Delta sink %s", gateway.Redact(url))}
	}
	r := delta.ReconcileSink(snap, appID, rep.LatestOffsetsBatch, rep.LatestCommitBatch)
	r.Table = gateway.Redact(url)
	if !r.OK() {
		key := "commits/"
		if r.InFlightBatch != nil {
			key = fmt.Sprintf("offsets/%d", *r.InFlightBatch)
		}
		rep.Findings = append(rep.Findings, checkpoint.Finding{ID: FindingDeltaSinkUnknown, Severity: checkpoint.SeverityError, Key: key,
			Message: "Delta sink " + r.Table + ": " + r.Reason,
			Next:    "do not restart until the sink table is the one this query writes (check --txn-app-id for foreachBatch writers, the table location, and delta.setTransactionRetentionDuration)"})
	}
	return r, nil
}

// inspectWithDeltaSink is the JSON report with the Delta sink's
// reconciliation as "sink".
type inspectWithDeltaSink struct {
	*checkpoint.Report
	Sink *delta.SinkReport `json:"sink"`
}

func writeDeltaSink(w io.Writer, r *delta.SinkReport) {
	txn := "none"
	if r.TxnVersion != nil {
		txn = strconv.FormatInt(*r.TxnVersion, 10)
	}
	fmt.Fprintf(w, "\nSINK (delta) %s at version %d: app id %s, txn version %s: %s\n  %s\n", r.Table, r.TableVersion, r.AppID, txn, strings.ToUpper(r.InFlight), r.Reason)
}

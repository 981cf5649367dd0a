package delta

import "fmt"

// Outcomes of a checkpoint's in-flight batch in a Delta sink.
const (
	SinkCommitted = "committed-in-sink" // txn == N: the sink committed N, the driver died before commits/N (a re-run is skipped: safe)
	SinkNotInSink = "not-in-sink"       // txn == N-1 (no txn reads -1): batch N is not in the sink (a re-run writes it)
	SinkUnknown   = "unknown"           // anything else: a finding
	SinkNone      = "none"              // no batch in flight, and the sink agrees with the last commit
)

// SinkReport reconciles a streaming checkpoint with the Delta table it
// writes: Spark's Delta sink commits batch N with txn (appId = the query
// id, version = N) and skips a batch whose id is at most the table's txn
// version for the query.
type SinkReport struct {
	Kind         string `json:"kind"` // "delta"
	Table        string `json:"table,omitempty"`
	TableVersion int64  `json:"table_version"`
	AppID        string `json:"app_id"`
	// TxnVersion is the table's txn version for AppID; nil when the table
	// has none (Delta reads that as -1).
	TxnVersion *int64 `json:"txn_version"`
	// InFlightBatch is the checkpoint's latest offsets batch when it has no
	// commit; LatestCommit its latest committed batch.
	InFlightBatch *int64 `json:"in_flight_batch,omitempty"`
	LatestCommit  *int64 `json:"latest_commit_batch,omitempty"`
	InFlight      string `json:"in_flight"`
	Reason        string `json:"reason"`
}

// OK reports whether the outcome is known.
func (r *SinkReport) OK() bool { return r.InFlight != SinkUnknown }

// ReconcileSink decides the outcome of the in-flight batch of a checkpoint
// (latestOffsets, latestCommit: its latest offsets and commit batch ids,
// nil for none) in snap, for the application id appID.
func ReconcileSink(snap *Snapshot, appID string, latestOffsets, latestCommit *int64) *SinkReport {
	r := &SinkReport{Kind: "delta", TableVersion: snap.Version, AppID: appID, LatestCommit: latestCommit}
	txn, has := snap.TxnVersion(appID)
	if has {
		r.TxnVersion = &txn
	}
	txnText := fmt.Sprintf("the table's txn version for %s is %d", appID, txn)
	if !has {
		txnText = fmt.Sprintf("the table has no txn for %s (read as -1)", appID)
	}
	inFlight := latestOffsets != nil && (latestCommit == nil || *latestOffsets > *latestCommit)
	if !inFlight {
		c := int64(-1)
		if latestCommit != nil {
			c = *latestCommit
		}
		switch {
		case txn == c:
			r.InFlight, r.Reason = SinkNone, fmt.Sprintf("no batch in flight; %s, the latest committed batch", txnText)
		case txn > c:
			r.InFlight, r.Reason = SinkUnknown, fmt.Sprintf("no batch in flight, the latest committed batch is %d, but %s: another checkpoint of this query id writes the table", c, txnText)
		default:
			r.InFlight, r.Reason = SinkUnknown, fmt.Sprintf("the latest committed batch is %d but %s: %s", c, txnText, lostCommits)
		}
		return r
	}
	n := *latestOffsets
	r.InFlightBatch = &n
	switch {
	case txn == n:
		r.InFlight = SinkCommitted
		r.Reason = fmt.Sprintf("batch %d is in the sink (%s): the driver stopped before commits/%d; a restart re-runs it and the sink skips it", n, txnText, n)
	case txn == n-1:
		r.InFlight = SinkNotInSink
		r.Reason = fmt.Sprintf("batch %d is not in the sink (%s): a restart re-runs and writes it", n, txnText)
	case txn > n:
		r.InFlight = SinkUnknown
		r.Reason = fmt.Sprintf("batch %d is in flight but %s, ahead of the checkpoint: another checkpoint (or a query reusing this id) writes the table, or it is another table", n, txnText)
	default:
		r.InFlight = SinkUnknown
		r.Reason = fmt.Sprintf("batch %d is in flight but %s: %s", n, txnText, lostCommits)
	}
	return r
}

const lostCommits = "the sink misses committed batches: a different table, a new query id (or foreachBatch's txnAppId: give it), lost sink commits, or a txn expired by delta.setTransactionRetentionDuration"

package rehearse

import "time"

// Verdicts of a cutover rehearsal (CutoverReport.Verdict).
const (
	VerdictSame    = "same"
	VerdictDiffers = "differs"
)

// CutoverReport is the outcome of Cutover. The JSON field names are
// stable (docs/rehearse.md documents them).
type CutoverReport struct {
	Spec      string `json:"spec"`
	Candidate string `json:"candidate"`
	Workdir   string `json:"workdir"`
	Kept      bool   `json:"kept"`
	Input     string `json:"input"`
	Sink      string `json:"sink"`
	// Verdict is VerdictSame or VerdictDiffers.
	Verdict string `json:"verdict"`
	// NeedsNewCheckpoint: the candidate cannot restore the current state
	// (compat calls a change not_allowed, or the engine refuses it); it ran
	// from empty state at the boundary, as `ckgate fresh-start` would.
	NeedsNewCheckpoint bool       `json:"needs_new_checkpoint"`
	Reasons            []string   `json:"reasons"`
	Production         Production `json:"production"`
	// Baseline is set when there was no production checkpoint: the current
	// spec was run over the input on an isolated checkpoint to stand in
	// for it.
	Baseline bool     `json:"baseline"`
	Boundary Boundary `json:"boundary"`
	// Compat is compat's classification of the candidate against the
	// current spec.
	Compat    []CompatChange `json:"compat"`
	Current   RunStats       `json:"current"`
	Cand      RunStats       `json:"candidate_run"`
	Reconcile CutoverDiff    `json:"reconcile"`
	// LateRows are the input rows the two runs handled differently (one
	// dropped as late, the other accepted), at most MaxNamedRows.
	LateRows []LateRow `json:"late_rows"`
	// Loses, when NeedsNewCheckpoint, says what the fresh start at the
	// boundary loses.
	Loses    string        `json:"boundary_loses,omitempty"`
	Duration time.Duration `json:"-"`
}

// Boundary is the bounded input both runs read.
type Boundary struct {
	FromBatch int64  `json:"from_batch"`
	ToBatch   int64  `json:"to_batch"`
	Interval  string `json:"interval,omitempty"`
	Files     int    `json:"files"`
	RestartAt *int64 `json:"restart_at,omitempty"`
	// StateRows and StateBytes are the restored state at the boundary
	// (after batch FromBatch-1).
	StateRows  int64 `json:"state_rows"`
	StateBytes int64 `json:"state_bytes"`
}

// CompatChange is one change compat found between the current spec and the
// candidate.
type CompatChange struct {
	Rule     string `json:"rule"`
	Field    string `json:"field"`
	Current  string `json:"current"`
	Proposed string `json:"candidate"`
	Class    string `json:"class"`
	Reason   string `json:"reason"`
}

// RunStats describe one run (current or candidate) over the bounded input.
type RunStats struct {
	// Restored: the run restored the state at the boundary; false: it ran
	// from empty state at the boundary (a fresh start).
	Restored         bool   `json:"restored"`
	Checkpoint       string `json:"checkpoint"`
	Output           string `json:"output"`
	Batches          int    `json:"batches"`
	Restarts         int    `json:"restarts"`
	RowsIn           int64  `json:"rows_in"`
	RowsOut          int64  `json:"rows_out"`
	LateDropped      int64  `json:"late_dropped"`
	LateAccepted     int64  `json:"late_accepted"`
	Duplicates       int64  `json:"duplicates"`
	StateRowsBefore  int64  `json:"state_rows_before"`
	StateBytesBefore int64  `json:"state_bytes_before"`
	StateRowsAfter   int64  `json:"state_rows_after"`
	StateBytesAfter  int64  `json:"state_bytes_after"`
	// OutputSHA256 is the SHA-256 of the output rows as written, in the
	// sink's manifest order (one per line).
	OutputSHA256 string `json:"output_sha256"`
	Note         string `json:"note,omitempty"`
}

// LateRow is an input row the two runs handled differently.
type LateRow struct {
	File      string `json:"file"`
	Row       string `json:"row"`
	Current   string `json:"current"`   // "dropped" or "accepted"
	Candidate string `json:"candidate"` // "dropped" or "accepted"
}

// MaxNamedRows bounds the rows a report names in each list.
const MaxNamedRows = 50

package rehearse

import "time"

// Report is the outcome of a rehearsal.
type Report struct {
	Spec       string         `json:"spec"`
	Seed       uint64         `json:"seed"`
	Workdir    string         `json:"workdir"`
	Kept       bool           `json:"kept"` // the work directory was kept
	Input      string         `json:"input"`
	Sink       string         `json:"sink"` // kind of the redirected sink
	Production Production     `json:"production"`
	Reference  ReferenceStats `json:"reference"`
	Scenarios  []Result       `json:"scenarios"`
	OK         bool           `json:"ok"`
	Duration   time.Duration  `json:"-"`
}

// Production is what rehearse did with the production checkpoint: it only
// read it, to archive a copy into the work directory.
type Production struct {
	Checkpoint string `json:"checkpoint"`
	Found      bool   `json:"found"`
	Archive    string `json:"archive,omitempty"` // the verified copy
	Files      int    `json:"files,omitempty"`
	Bytes      int64  `json:"bytes,omitempty"`
	QueryID    string `json:"query_id,omitempty"`
	Status     string `json:"status,omitempty"`
	Note       string `json:"note,omitempty"`
}

// ReferenceStats describe the fault-free reference run over the input.
type ReferenceStats struct {
	Files       int   `json:"files"`
	Batches     int   `json:"batches"`
	RowsIn      int64 `json:"rows_in"`
	RowsOut     int64 `json:"rows_out"`
	LateDropped int64 `json:"late_dropped"`
	StateRows   int64 `json:"state_rows"`
}

// Result is one scenario's outcome. The JSON keys are fixed (issue 9).
type Result struct {
	Name            string `json:"name"`
	OK              bool   `json:"ok"`
	RowsIn          int64  `json:"rows_in"`
	RowsOut         int64  `json:"rows_out"`
	Lost            int64  `json:"lost"`
	Duplicated      int64  `json:"duplicated"`
	LateDropped     int64  `json:"late_dropped"`
	LateAccepted    int64  `json:"late_accepted"`
	StateRowsBefore int64  `json:"state_rows_before"`
	StateRowsAfter  int64  `json:"state_rows_after"`
	Detail          string `json:"detail"`
}

// Failed counts the scenarios that did not pass.
func (r *Report) Failed() int {
	n := 0
	for _, s := range r.Scenarios {
		if !s.OK {
			n++
		}
	}
	return n
}

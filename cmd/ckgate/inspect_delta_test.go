package main

import (
	"encoding/json"
	"testing"
)

// The checkpoints are built from offset strings (no real Spark checkpoint
// with a Delta sink is available here); history-delta-0.2.0 was written by
// a real streaming Delta sink: txn (e4a20b59-…, 0).
func TestInspectDeltaSink(t *testing.T) {
	o := Options{}
	hist := deltaTestTables + "history-delta-0.2.0"
	const q = "e4a20b59-dd0e-4c50-b074-e8ae4786df30"
	for _, c := range []struct {
		ck, app, want string
		code          int
		txn           int64
	}{
		{"sink-committed", "", "committed-in-sink", 0, 0},
		{"sink-not-in-sink", "", "not-in-sink", 0, 0},
		{"sink-unknown", "", "unknown", 1, 0},
		{"sink-committed", "my-foreach-batch-app", "not-in-sink", 0, -1}, // batch 0, no txn for that app id
		{"sink-not-in-sink", "my-foreach-batch-app", "unknown", 1, -1},   // batch 1, no txn while batch 0 committed
	} {
		args := []string{"inspect", deltaCks + c.ck, "--sink", hist, "--format", "json"}
		if c.app != "" {
			args = append(args, "--txn-app-id", c.app)
		}
		r := ckgate(t, o, "", args...)
		r.want(t, c.code)
		var rep struct {
			Sink struct {
				Kind       string `json:"kind"`
				AppID      string `json:"app_id"`
				TxnVersion *int64 `json:"txn_version"`
				InFlight   string `json:"in_flight"`
			} `json:"sink"`
			Findings []struct{ ID string } `json:"findings"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		s := rep.Sink
		wantApp := q
		if c.app != "" {
			wantApp = c.app
		}
		if s.Kind != "delta" || s.AppID != wantApp || s.InFlight != c.want || (c.txn >= 0) != (s.TxnVersion != nil) || (s.TxnVersion != nil && *s.TxnVersion != c.txn) {
			t.Errorf("%s %s: sink = %+v", c.ck, c.app, s)
		}
		unknown := false
		for _, f := range rep.Findings {
			unknown = unknown || f.ID == FindingDeltaSinkUnknown
		}
		if unknown != (c.want == "unknown") {
			t.Errorf("%s %s: findings %+v", c.ck, c.app, rep.Findings)
		}
	}
	ckgate(t, o, "", "inspect", deltaCks+"sink-not-in-sink", "--sink", hist).want(t, 0, "SINK (delta)", "NOT-IN-SINK", "batch 1 is not in the sink")
	ckgate(t, o, "", "inspect", deltaCks+"sink-committed", "--txn-app-id", "x").wantErr(t, 2, "--sink")
	ckgate(t, o, "", "inspect", deltaCks+"sink-committed", "--sink", deltaTestTables+"deltalog-invalid-protocol-version").wantErr(t, 2, "reader version 99")
}

func TestInspectShowsDeltaOffsets(t *testing.T) {
	ckgate(t, Options{}, "", "inspect", deltaCks+"reads-history").want(t, 0,
		"delta table "+historyID+" version 3 after file 2 (initial snapshot)", "delta table "+historyID+" version 4")
	r := ckgate(t, Options{}, "", "inspect", deltaCks+"reads-history", "--json")
	r.want(t, 0, `"reservoir_id": "`+historyID+`"`, `"is_starting_version": true`)
}

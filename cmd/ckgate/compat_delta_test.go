package main

import (
	"encoding/json"
	"testing"
)

func TestCompatDeltaTableID(t *testing.T) {
	o := Options{}
	plan := deltaCks + "delta-source.plan.json" // a Delta source, no table id
	hist := deltaTestTables + "history-delta-0.2.0"
	// without --delta the proposal's table id is unknown: unchecked, compatible
	ckgate(t, o, "", "compat", deltaCks+"reads-replaced", "--plan", plan).want(t, 0, "COMPATIBLE")
	r := ckgate(t, o, "", "compat", deltaCks+"reads-replaced", "--plan", plan, "--delta", hist, "--format", "json")
	r.want(t, 1)
	var out struct {
		Compatible bool `json:"compatible"`
		Changes    []struct {
			Field, Class, Reason, Recorded, Proposed string
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Compatible || len(out.Changes) != 1 {
		t.Fatalf("%+v", out)
	}
	ch := out.Changes[0]
	if ch.Field != "sources[0].table_id" || ch.Class != "not_allowed" || ch.Recorded != "0f5e3a4b-6c7d-4e8f-9a0b-1c2d3e4f5a6b" || ch.Proposed != historyID {
		t.Errorf("change = %+v", ch)
	}
	ckgate(t, o, "", "compat", deltaCks+"reads-replaced", "--plan", plan, "--delta", hist).want(t, 1, "DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE")
	ckgate(t, o, "", "compat", deltaCks+"reads-history", "--plan", plan, "--delta", "0="+hist).want(t, 0, "COMPATIBLE: 0 not allowed")
	ckgate(t, o, "", "compat", deltaCks+"reads-history", "--plan", plan, "--delta", deltaTestTables+"no-delta-log-folder").wantErr(t, 2, "not a Delta table")
}

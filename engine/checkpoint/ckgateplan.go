package checkpoint

import (
	"context"
	"encoding/json"

	"github.com/ckgate/ckgate/gateway"
)

// EnginePlan is ckgate's _ckgate/plan.json (PlanKey): what the first run of
// a query fixed. The engine writes it; compat, gap, fresh-start and the
// file sink read it, all through DecodePlan or ReadPlan.
type EnginePlan struct {
	Version     int               `json:"version"`
	Name        string            `json:"name"`
	Fingerprint string            `json:"fingerprint"`
	Stateful    PlanStateful      `json:"plan"`
	Partitions  int               `json:"partitions"`
	Source      map[string]string `json:"source"`
	Sink        map[string]string `json:"sink"`
	// Settings are those of the latest run; nil in a plan written before
	// ckgate recorded them.
	Settings *PlanSettings `json:"settings,omitempty"`
}

// PlanStateful is the part of a spec that a restart may not change:
// Spark's rule, "no change to stateful operations or the source".
type PlanStateful struct {
	SourceKind string          `json:"source_kind"`
	EventTime  string          `json:"event_time,omitempty"`
	Operator   string          `json:"operator"`
	Keys       []string        `json:"keys,omitempty"`
	SizeMs     int64           `json:"size_ms,omitempty"`
	SlideMs    int64           `json:"slide_ms,omitempty"`
	GapMs      int64           `json:"gap_ms,omitempty"`
	Aggregates []PlanAggregate `json:"aggregates,omitempty"`
	OutputMode string          `json:"output_mode"`
}

// PlanAggregate is one aggregate of a plan, as the spec names it: a
// function and its field ("" for count(*)). The JSON keys are the Go
// names (Func, Field), as the first plans were written.
type PlanAggregate struct {
	Func  string
	Field string
}

// PlanSettings is the part of _ckgate/plan.json that a restart may change
// but that its result depends on: the watermark, the where filter, the
// source's and sink's other options and the state format. The engine
// records those of the latest run (a restart with other settings writes
// them again, compare-and-swap, and says what changed); `ckgate compat`
// classifies a change of each. Plans written before ckgate recorded them
// have none (EnginePlan.Settings is nil): compat then lists them as
// unchecked.
type PlanSettings struct {
	// EventTime is the spec's event_time, also for a stateless query.
	EventTime string `json:"event_time"`
	// WatermarkMs is the watermark delay in milliseconds.
	WatermarkMs int64 `json:"watermark_ms"`
	// Where is the where filter as written ("" = none).
	Where string `json:"where"`
	// SourceOptions are the source's options that are not its identity
	// (rate limits, starting offsets, brokers).
	SourceOptions map[string]string `json:"source_options"`
	// SinkOptions are the sink's options that are not its identity: an
	// HTTP sink's timeout, batch size and header names (their values only
	// as a SHA-256: they may hold secrets).
	SinkOptions map[string]string `json:"sink_options"`
	// StateFormat is the engine's state format for a stateful query, ""
	// otherwise.
	StateFormat string `json:"state_format"`
}

// PlanMaxVersion is the highest plan version understood.
const PlanMaxVersion = 1

// DecodePlan decodes _ckgate/plan.json: one JSON object of version 1.
// Bytes cut short are ErrTruncated, anything else that is not such an
// object (trailing data, version 0 or none) ErrCorrupt, a newer version a
// *VersionError. Unknown fields are ignored.
func DecodePlan(data []byte) (*EnginePlan, error) {
	var p EnginePlan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, jsonErr("plan", err)
	}
	switch {
	case p.Version > PlanMaxVersion:
		return nil, &VersionError{What: "plan", Found: p.Version, Max: PlanMaxVersion}
	case p.Version < 1:
		return nil, corruptf("plan version %d", p.Version)
	}
	return &p, nil
}

// ReadPlan reads _ckgate/plan.json. A checkpoint without one (Spark's)
// is gateway.ErrNotFound; a decoding error is a *KeyError naming PlanKey.
func ReadPlan(ctx context.Context, st gateway.Store) (*EnginePlan, error) {
	return readDecode(ctx, st, PlanKey, DecodePlan)
}

// Encode returns the bytes the engine writes: indented JSON and a newline.
func (p EnginePlan) Encode() []byte {
	b, _ := json.MarshalIndent(p, "", "  ") // maps of strings and plain fields always marshal
	return append(b, '\n')
}

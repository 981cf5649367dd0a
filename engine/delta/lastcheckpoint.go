package delta

import (
	"bytes"
	"encoding/json"
)

// LastCheckpoint is _delta_log/_last_checkpoint: a hint to the newest
// checkpoint. A reader must not trust it blindly (it is written after the
// checkpoint and may be stale, missing or garbage): Snapshot falls back to
// listing when it is unreadable or names a checkpoint that is not there.
type LastCheckpoint struct {
	Version          int64           `json:"version"`
	Size             int64           `json:"size"`
	Parts            *int            `json:"parts,omitempty"`
	SizeInBytes      *int64          `json:"sizeInBytes,omitempty"`
	NumOfAddFiles    *int64          `json:"numOfAddFiles,omitempty"`
	CheckpointSchema json.RawMessage `json:"checkpointSchema,omitempty"`
	V2Checkpoint     json.RawMessage `json:"v2Checkpoint,omitempty"`
	Checksum         string          `json:"checksum,omitempty"`
}

// ParseLastCheckpoint parses the bytes of _last_checkpoint (key names it
// in errors). A version that is absent or negative, or parts < 1, is
// ErrCorrupt.
func ParseLastCheckpoint(key string, data []byte) (LastCheckpoint, error) {
	var raw struct {
		Version *int64 `json:"version"`
	}
	data = bytes.TrimSpace(data)
	if err := json.Unmarshal(data, &raw); err != nil {
		return LastCheckpoint{}, corruptf(key, "not JSON: %v", err)
	}
	if raw.Version == nil {
		return LastCheckpoint{}, corruptf(key, "no \"version\"")
	}
	var lc LastCheckpoint
	if err := json.Unmarshal(data, &lc); err != nil {
		return LastCheckpoint{}, corruptf(key, "%v", err)
	}
	if lc.Version < 0 {
		return LastCheckpoint{}, corruptf(key, "version %d is negative", lc.Version)
	}
	if lc.Parts != nil && *lc.Parts < 1 {
		return LastCheckpoint{}, corruptf(key, "parts %d is less than 1", *lc.Parts)
	}
	return lc, nil
}

// Marshal returns the bytes of _last_checkpoint for lc.
func (lc LastCheckpoint) Marshal() ([]byte, error) { return json.Marshal(lc) }

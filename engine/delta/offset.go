package delta

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// SourceOffsetVersion is the sourceVersion of the offsets a ckgate Delta
// source writes (Spark's DeltaSourceOffset version 1).
const SourceOffsetVersion = 1

// BaseIndex is the index of a position before every file of its version.
const BaseIndex = -1

// sourceOffset is Spark's DeltaSourceOffset JSON.
type sourceOffset struct {
	SourceVersion     *int    `json:"sourceVersion"`
	ReservoirID       *string `json:"reservoirId"`
	ReservoirVersion  *int64  `json:"reservoirVersion"`
	Index             *int64  `json:"index"`
	IsStartingVersion *bool   `json:"isStartingVersion"`
}

// ParseSourceOffset parses a Delta source offset as Spark writes it on a
// source's line of offsets/N: {"sourceVersion":1,"reservoirId":…,
// "reservoirVersion":…,"index":…,"isStartingVersion":…}. sourceVersion 1
// and 3 are read (3 only writes the metadata-change indexes -20/-19 and
// may write -100 for the base index, read here as BaseIndex); 2 and
// anything else, a missing field, a negative version or an index below
// -100 is an error.
func ParseSourceOffset(text string) (Position, error) {
	var o sourceOffset
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	if err := dec.Decode(&o); err != nil {
		return Position{}, fmt.Errorf("delta source offset: %w", err)
	}
	switch {
	case o.SourceVersion == nil || o.ReservoirID == nil || o.ReservoirVersion == nil || o.Index == nil || o.IsStartingVersion == nil:
		return Position{}, fmt.Errorf("delta source offset: want sourceVersion, reservoirId, reservoirVersion, index and isStartingVersion")
	case *o.SourceVersion != 1 && *o.SourceVersion != 3:
		return Position{}, fmt.Errorf("delta source offset: sourceVersion %d (Delta writes 1 or 3)", *o.SourceVersion)
	case *o.ReservoirID == "":
		return Position{}, fmt.Errorf("delta source offset: empty reservoirId")
	case *o.ReservoirVersion < 0:
		return Position{}, fmt.Errorf("delta source offset: reservoirVersion %d is negative", *o.ReservoirVersion)
	case *o.Index < -100:
		return Position{}, fmt.Errorf("delta source offset: index %d", *o.Index)
	}
	p := Position{TableID: *o.ReservoirID, Version: *o.ReservoirVersion, Index: *o.Index, IsStartingVersion: *o.IsStartingVersion}
	if p.Index == -100 {
		p.Index = BaseIndex
	}
	return p, nil
}

// SourceOffset is p as the ckgate Delta source writes it (sourceVersion 1).
func (p Position) SourceOffset() string {
	id, _ := json.Marshal(p.TableID)
	return fmt.Sprintf(`{"sourceVersion":%d,"reservoirId":%s,"reservoirVersion":%d,"index":%d,"isStartingVersion":%t}`,
		SourceOffsetVersion, id, p.Version, p.Index, p.IsStartingVersion)
}

package delta

import (
	"encoding/json"
	"fmt"
)

// SourceOffsetVersion is the sourceVersion of the offsets a ckgate Delta
// source writes (Spark's DeltaSourceOffset version 1).
const SourceOffsetVersion = 1

// BaseIndex is the index of a position before every file of its version.
const BaseIndex = -1

// SourceOffset is p as Spark's Delta source writes it on its line of
// offsets/N: sourceVersion 1, or 3 for the metadata-change indexes (-20,
// -19) that only version 3 has; engine/checkpoint's
// DecodeDeltaSourceOffset reads it back.
func (p Position) SourceOffset() string {
	id, _ := json.Marshal(p.TableID)
	v := SourceOffsetVersion
	if p.Index < BaseIndex {
		v = 3
	}
	return fmt.Sprintf(`{"sourceVersion":%d,"reservoirId":%s,"reservoirVersion":%d,"index":%d,"isStartingVersion":%t}`,
		v, id, p.Version, p.Index, p.IsStartingVersion)
}

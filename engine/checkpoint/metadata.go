package checkpoint

import (
	"bytes"
	"encoding/json"
)

// StreamMetadata is the checkpoint's "metadata" file: {"id":"<query uuid>"},
// written once, no version line. Spark writes it without a trailing
// newline; Spark 2.1 pretty-printed it. Unknown fields are ignored.
type StreamMetadata struct {
	ID string `json:"id"`
}

// DecodeStreamMetadata decodes the metadata file.
func DecodeStreamMetadata(data []byte) (*StreamMetadata, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, truncatedf("empty query metadata")
	}
	var m StreamMetadata
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, jsonErr("query metadata", err)
	}
	if m.ID == "" {
		return nil, corruptf("query metadata without an id")
	}
	return &m, nil
}

// Encode returns the bytes Spark writes: {"id":"…"} without a newline.
func (m StreamMetadata) Encode() []byte {
	b, _ := json.Marshal(m) // one string field always marshals
	return b
}

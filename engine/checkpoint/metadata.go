package checkpoint

import (
	"encoding/json"

	"github.com/ckgate/ckgate/gateway"
)

// StreamMetadata is the checkpoint's "metadata" file: {"id":"<query uuid>"},
// written once, no version line. Spark writes it without a trailing
// newline; Spark 2.1 pretty-printed it. Unknown fields are ignored.
type StreamMetadata struct {
	ID string `json:"id"`
}

// DecodeStreamMetadata decodes the metadata file with the one parser of
// it (gateway.ParseMetadataID): a file cut short (an empty one included)
// is ErrTruncated, any other refusal or an empty id ErrCorrupt.
func DecodeStreamMetadata(data []byte) (*StreamMetadata, error) {
	id, err := gateway.ParseMetadataID(data)
	if err != nil {
		return nil, jsonErr("query metadata", err)
	}
	if id == "" {
		return nil, corruptf("query metadata without an id")
	}
	return &StreamMetadata{ID: id}, nil
}

// Encode returns the bytes Spark writes: {"id":"…"} without a newline.
func (m StreamMetadata) Encode() []byte {
	b, _ := json.Marshal(m) // one string field always marshals
	return b
}

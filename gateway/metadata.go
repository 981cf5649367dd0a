package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MetadataKey is the file, directly under a checkpoint root, that holds
// the query id: {"id":"<query uuid>"} (Spark's and ckgate's; Spark 2.1
// pretty-printed it).
const MetadataKey = "metadata"

// ParseMetadataID returns the query id held by a checkpoint's metadata
// file: exactly one JSON object whose "id" is a string (unknown fields are
// ignored). Anything else is an error: no bytes or an object cut short
// (wrapping io.ErrUnexpectedEOF), not a JSON object, no "id" field, an id
// that is not a string, or anything after the object. An empty id is
// returned as "" without an error: the caller decides what that means.
//
// It is the one parser of the file: the writer session, the open policy
// and the checkpoint reader (engine/checkpoint) all call it.
func ParseMetadataID(data []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var md struct {
		ID *string `json:"id"`
	}
	if err := dec.Decode(&md); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // an empty file was cut short
		}
		return "", fmt.Errorf("not a checkpoint metadata file: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", errors.New("not a checkpoint metadata file: trailing data after the JSON object")
	}
	if md.ID == nil {
		return "", errors.New(`not a checkpoint metadata file: no "id" field`)
	}
	return *md.ID, nil
}

// ReadMetadataID reads the query id in the metadata file of the checkpoint
// rooted at s: "" and no error when there is no such file (a new
// checkpoint). A store failure is returned as the store gave it; a file
// that ParseMetadataID refuses is an *Error of kind ErrInvalidKey naming
// MetadataKey.
func ReadMetadataID(ctx context.Context, s Store) (string, error) {
	data, _, err := GetBounded(ctx, s, MetadataKey, 0)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	id, err := ParseMetadataID(data)
	if err != nil {
		return "", E("open", MetadataKey, ErrInvalidKey, err)
	}
	return id, nil
}

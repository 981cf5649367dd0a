package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
)

// StartKey is the starting point of a new checkpoint root that a fresh
// start wrote (lifecycle.FreshStart): the first run of a source reads its
// initial offsets from it instead of the earliest (or latest) ones.
const StartKey = checkpoint.CkgateDir + "/start.json"

// StartPoint is the content of StartKey.
type StartPoint struct {
	// Kafka is topic → partition → the first offset to read.
	Kafka map[string]map[int32]int64 `json:"kafka,omitempty"`
	// Files is the boundary of a files source (FilesStart).
	Files *FilesStart `json:"files,omitempty"`
}

// ReadStart returns the start point of st's root, or nil when it has none.
func ReadStart(ctx context.Context, st gateway.Store) (*StartPoint, error) {
	data, _, err := gateway.GetBounded(ctx, st, StartKey, 0)
	if errors.Is(err, gateway.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", StartKey, err)
	}
	var sp StartPoint
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", StartKey, checkpoint.ErrCorrupt, err)
	}
	return &sp, nil
}

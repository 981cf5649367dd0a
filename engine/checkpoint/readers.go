package checkpoint

import (
	"context"
	"errors"

	"github.com/ckgate/ckgate/gateway"
)

// Read helpers: each reads one file of the layout through st and decodes
// it; every error names the key (store errors keep their gateway kind,
// decode errors are ErrCorrupt, ErrTruncated or ErrUnsupportedVersion).

func readDecode[T any](ctx context.Context, st gateway.Store, key string, decode func([]byte) (T, error)) (T, error) {
	var zero T
	data, _, err := gateway.GetBounded(ctx, st, key, 0)
	if err != nil {
		return zero, err
	}
	v, err := decode(data)
	if err != nil {
		return zero, keyErr(key, err)
	}
	return v, nil
}

// ReadStreamMetadata reads "metadata".
func ReadStreamMetadata(ctx context.Context, st gateway.Store) (*StreamMetadata, error) {
	return readDecode(ctx, st, MetadataKey, DecodeStreamMetadata)
}

// ReadOffsets reads offsets/<batch>.
func ReadOffsets(ctx context.Context, st gateway.Store, batch int64) (*OffsetSeq, error) {
	return readDecode(ctx, st, OffsetsKey(batch), DecodeOffsetSeq)
}

// ReadCommit reads commits/<batch>.
func ReadCommit(ctx context.Context, st gateway.Store, batch int64) (*CommitMetadata, error) {
	return readDecode(ctx, st, CommitKey(batch), DecodeCommit)
}

// ReadOperatorMetadata reads an operator metadata file (v1 or v2) at key.
func ReadOperatorMetadata(ctx context.Context, st gateway.Store, key string) (*OperatorMetadata, error) {
	return readDecode(ctx, st, key, DecodeOperatorMetadata)
}

// ReadStateSchema reads a state schema file (v1, v2 or v3) at key.
func ReadStateSchema(ctx context.Context, st gateway.Store, key string) (*StateSchema, error) {
	return readDecode(ctx, st, key, DecodeStateSchema)
}

// ReadQueryID returns the query id in "metadata", "" when the checkpoint
// has none (a new checkpoint: not an error). A metadata file that does not
// decode, or holds no id, is a *KeyError naming it.
func ReadQueryID(ctx context.Context, st gateway.Store) (string, error) {
	m, err := ReadStreamMetadata(ctx, st)
	if errors.Is(err, gateway.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return m.ID, nil
}

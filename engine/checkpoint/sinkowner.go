package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

// The owner log of a file sink, <output>/_ckgate/sink-owner/N: who writes
// the output directory. Spark's readers skip names that start with '_' and
// follow _spark_metadata only, so the log is invisible to them. Entries are
// create-only and never replaced: a hand-over to another query adds entry
// N+1, and the entry with the highest N is the owner. Each entry records
// the owning query (id and canonical checkpoint location) and the manifest
// id its batch 0 maps to (BatchOffset): a query that takes over a sink
// continues the sink's manifest numbering instead of colliding with the
// manifests the old owner wrote.

// SinkOwnerDir is the owner log's directory under a file sink's output.
const SinkOwnerDir = CkgateDir + "/sink-owner"

// maxSinkOwnerBytes bounds one owner record.
const maxSinkOwnerBytes = 64 << 10

// SinkOwner is one entry of a file sink's owner log.
type SinkOwner struct {
	Version int `json:"version"`
	// QueryID and Checkpoint name the owning query: its id and its
	// checkpoint's canonical location (secrets redacted).
	QueryID    string `json:"query_id"`
	Checkpoint string `json:"checkpoint"`
	// BatchOffset is added to the owner's batch id to give the manifest id
	// (_spark_metadata/<batch+offset>) of that batch.
	BatchOffset int64 `json:"batch_offset"`
	// From is the query that owned the sink before (absent on the first
	// entry and for a sink written without an owner record); Reason says
	// why the sink changed hands (--adopt-sink, a fresh start, an upgrade).
	From   *SinkOwnerRef `json:"from,omitempty"`
	Reason string        `json:"reason,omitempty"`
	Time   time.Time     `json:"time"`
}

// SinkOwnerRef names a previous owner.
type SinkOwnerRef struct {
	QueryID    string `json:"query_id"`
	Checkpoint string `json:"checkpoint,omitempty"`
}

// String names the owner for messages.
func (o SinkOwner) String() string {
	return fmt.Sprintf("query %s (checkpoint %s)", o.QueryID, o.Checkpoint)
}

// SinkOwnerKey is the key of entry n of the owner log.
func SinkOwnerKey(n int64) string { return SinkOwnerDir + "/" + strconv.FormatInt(n, 10) }

// EncodeSinkOwner encodes an owner record.
func EncodeSinkOwner(o SinkOwner) []byte {
	b, _ := json.MarshalIndent(o, "", "  ")
	return append(b, '\n')
}

// DecodeSinkOwner parses an owner record: one JSON object of version 1
// with a query id and a checkpoint, nothing after it. Anything else is
// ErrCorrupt (ErrUnsupportedVersion for a newer version).
func DecodeSinkOwner(data []byte) (SinkOwner, error) {
	var o SinkOwner
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return SinkOwner{}, jsonErr("sink owner record", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return SinkOwner{}, corruptf("sink owner record: trailing data after the JSON object")
	}
	switch {
	case o.Version > 1:
		return SinkOwner{}, &VersionError{What: "sink owner record", Found: o.Version, Max: 1}
	case o.Version != 1:
		return SinkOwner{}, corruptf("sink owner record: version %d", o.Version)
	case strings.TrimSpace(o.QueryID) == "":
		return SinkOwner{}, corruptf("sink owner record: no query_id")
	case strings.TrimSpace(o.Checkpoint) == "":
		return SinkOwner{}, corruptf("sink owner record: no checkpoint")
	case o.From != nil && strings.TrimSpace(o.From.QueryID) == "":
		return SinkOwner{}, corruptf("sink owner record: from without a query_id")
	}
	return o, nil
}

// ReadSinkOwner returns the current owner of the file sink at st (the
// owner log's entry with the highest number) and that number; n is -1 and
// the owner nil when the sink has no owner log. An entry that cannot be
// parsed is an error naming its key (a *KeyError, ErrCorrupt); names in
// the log that are not entry numbers are ignored.
func ReadSinkOwner(ctx context.Context, st gateway.Store) (owner *SinkOwner, n int64, err error) {
	n = -1
	for a, err := range st.List(ctx, SinkOwnerDir+"/") {
		if errors.Is(err, gateway.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, -1, fmt.Errorf("list %s: %w", SinkOwnerDir, err)
		}
		id, perr := ParseBatchID(strings.TrimPrefix(a.Key, SinkOwnerDir+"/"))
		if perr == nil {
			n = max(n, id)
		}
	}
	if n < 0 {
		return nil, -1, nil
	}
	key := SinkOwnerKey(n)
	data, _, err := gateway.GetBounded(ctx, st, key, maxSinkOwnerBytes)
	if err != nil {
		return nil, -1, fmt.Errorf("read %s: %w", key, err)
	}
	o, err := DecodeSinkOwner(data)
	if err != nil {
		return nil, -1, keyErr(key, err)
	}
	return &o, n, nil
}

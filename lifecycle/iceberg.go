package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
)

// ErrNotIceberg: the location holds no Iceberg table metadata.
var ErrNotIceberg = errors.New("not an Iceberg table")

// IcebergMetadata is what gap reads of an Iceberg table's metadata file.
type IcebergMetadata struct {
	Key               string            `json:"metadata_file"`
	FormatVersion     int               `json:"format_version"`
	TableUUID         string            `json:"table_uuid"`
	CurrentSnapshotID *int64            `json:"current_snapshot_id"`
	Snapshots         []IcebergSnapshot `json:"-"`
}

// IcebergSnapshot is one snapshot of the table's metadata.
type IcebergSnapshot struct {
	ID     int64  `json:"snapshot-id"`
	Parent *int64 `json:"parent-snapshot-id"`
}

// ParseIcebergMetadata parses a table metadata file (vN.metadata.json);
// key names it in errors (checkpoint.ErrCorrupt).
func ParseIcebergMetadata(key string, data []byte) (*IcebergMetadata, error) {
	var raw struct {
		FormatVersion     *int              `json:"format-version"`
		TableUUID         string            `json:"table-uuid"`
		CurrentSnapshotID *int64            `json:"current-snapshot-id"`
		Snapshots         []IcebergSnapshot `json:"snapshots"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w: not Iceberg table metadata: %v", key, checkpoint.ErrCorrupt, err)
	}
	if raw.FormatVersion == nil || *raw.FormatVersion < 1 || *raw.FormatVersion > 3 {
		return nil, fmt.Errorf("%s: %w: no format-version 1 to 3", key, checkpoint.ErrCorrupt)
	}
	if raw.TableUUID == "" && *raw.FormatVersion > 1 {
		return nil, fmt.Errorf("%s: %w: no table-uuid", key, checkpoint.ErrCorrupt)
	}
	m := &IcebergMetadata{Key: key, FormatVersion: *raw.FormatVersion, TableUUID: raw.TableUUID, Snapshots: raw.Snapshots}
	if c := raw.CurrentSnapshotID; c != nil && *c != -1 {
		m.CurrentSnapshotID = c
	}
	return m, nil
}

// IsAncestor reports whether snapshot id is the current snapshot or one of
// its ancestors (following parent-snapshot-id through the snapshots the
// metadata still lists).
func (m *IcebergMetadata) IsAncestor(id int64) bool {
	if m.CurrentSnapshotID == nil {
		return false
	}
	byID := make(map[int64]IcebergSnapshot, len(m.Snapshots))
	for _, s := range m.Snapshots {
		byID[s.ID] = s
	}
	cur := *m.CurrentSnapshotID
	for range len(m.Snapshots) + 1 {
		if cur == id {
			return true
		}
		s, ok := byID[cur]
		if !ok || s.Parent == nil {
			return false
		}
		cur = *s.Parent
	}
	return false
}

// Has reports whether the metadata still lists snapshot id.
func (m *IcebergMetadata) Has(id int64) bool {
	for _, s := range m.Snapshots {
		if s.ID == id {
			return true
		}
	}
	return false
}

// ReadIcebergMetadata reads the current metadata file of the Iceberg table
// in s: metadata/version-hint.text (Hadoop tables) when present, else the
// highest-numbered metadata/*.metadata.json.
func ReadIcebergMetadata(ctx context.Context, s gateway.Store) (*IcebergMetadata, error) {
	key := ""
	hint, _, err := gateway.GetBounded(ctx, s, "metadata/version-hint.text", 1<<10)
	switch {
	case err == nil:
		n, perr := strconv.ParseInt(strings.TrimSpace(string(hint)), 10, 64)
		if perr != nil || n < 0 {
			return nil, fmt.Errorf("metadata/version-hint.text: %w: %q is not a version", checkpoint.ErrCorrupt, strings.TrimSpace(string(hint)))
		}
		key = fmt.Sprintf("metadata/v%d.metadata.json", n)
	case !errors.Is(err, gateway.ErrNotFound):
		return nil, fmt.Errorf("read metadata/version-hint.text: %w", err)
	default:
		best := int64(-1)
		for a, err := range s.List(ctx, "metadata/") {
			if err != nil {
				return nil, fmt.Errorf("list metadata/: %w", err)
			}
			if n, ok := metadataVersion(strings.TrimPrefix(a.Key, "metadata/")); ok && n > best {
				best, key = n, a.Key
			}
		}
		if key == "" {
			return nil, fmt.Errorf("%w: no metadata/*.metadata.json", ErrNotIceberg)
		}
	}
	data, _, err := gateway.GetBounded(ctx, s, key, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	return ParseIcebergMetadata(key, data)
}

// metadataVersion is N of "vN.metadata.json" or "NNNNN-<uuid>.metadata.json".
func metadataVersion(name string) (int64, bool) {
	base, ok := strings.CutSuffix(name, ".metadata.json")
	if !ok || strings.Contains(base, "/") {
		return 0, false
	}
	base = strings.TrimPrefix(base, "v")
	if i := strings.IndexByte(base, '-'); i >= 0 {
		base = base[:i]
	}
	n, err := strconv.ParseInt(base, 10, 64)
	return n, err == nil && n >= 0
}

// IcebergGap is the verdict on one Iceberg source.
type IcebergGap struct {
	Status            string `json:"status"` // ok, gap, identity-changed
	SnapshotID        int64  `json:"snapshot_id"`
	CurrentSnapshotID *int64 `json:"current_snapshot_id"`
	TableUUID         string `json:"table_uuid"`
	MetadataFile      string `json:"metadata_file"`
	Reason            string `json:"reason,omitempty"`
}

// CheckIcebergResume: the snapshot a stream resumes from must still be in
// the table and an ancestor of (or equal to) its current snapshot.
func CheckIcebergResume(m *IcebergMetadata, o checkpoint.IcebergSourceOffset) *IcebergGap {
	g := &IcebergGap{SnapshotID: o.SnapshotID, CurrentSnapshotID: m.CurrentSnapshotID, TableUUID: m.TableUUID, MetadataFile: m.Key}
	switch {
	case m.IsAncestor(o.SnapshotID):
		g.Status = GapOK
	case !m.Has(o.SnapshotID):
		g.Status = GapExpired
		g.Reason = fmt.Sprintf("snapshot %d is no longer in the table (expired by expire_snapshots, or another table): the stream cannot resume from it", o.SnapshotID)
	default:
		g.Status = GapIdentityChanged
		g.Reason = fmt.Sprintf("snapshot %d is not an ancestor of the current snapshot %s (a rollback, a replaced table or another branch): the stream's history is not the table's", o.SnapshotID, optText(m.CurrentSnapshotID))
	}
	return g
}

func optText(p *int64) string {
	if p == nil {
		return "(none)"
	}
	return strconv.FormatInt(*p, 10)
}

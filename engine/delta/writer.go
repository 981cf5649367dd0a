package delta

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

// CheckpointInterval is how often a Writer writes a classic checkpoint:
// after every commit whose version is a multiple of it (Delta's default
// delta.checkpointInterval).
const CheckpointInterval = 10

// ErrConcurrentChange: another writer changed the table's metadata or
// protocol (a new table id: CREATE OR REPLACE; a schema change) since this
// writer read it; a blind append cannot go on on top of it.
var ErrConcurrentChange = errors.New("the Delta table changed under the writer")

// Writer appends to one Delta table as one application (a streaming
// query: AppID is its query id), the way Spark's Delta sink does: each
// batch is one commit _delta_log/<version>.json created only if absent
// (gateway.IfAbsent), so that of two writers of one version exactly one
// wins on every store, without a lock service; the commit holds the
// batch's add actions, a txn action (AppID, the batch id) and commitInfo
// "STREAMING UPDATE". A batch whose txn version for AppID is at or above
// the batch id was committed before and is skipped. A lost race is
// retried on the next version (Delta's optimistic concurrency for blind
// appends) after reading the winner's commit: when the winner committed
// this batch (an earlier attempt whose answer was lost, a zombie), the
// batch is skipped.
//
// The writer keeps the table's state in memory (read once at open, then
// advanced by its own commits and the commits it lost to), so a batch
// costs one store request beyond its data files in steady state, and a
// classic checkpoint (and _last_checkpoint) every CheckpointInterval
// versions.
type Writer struct {
	store gateway.Store
	appID string
	now   func() time.Time
	st    *state
	// Retries counts the lost commit races so far.
	Retries int
}

// OpenWriter reads the latest snapshot of the table in s for appID; a
// location without a _delta_log is a table to create at the first commit.
func OpenWriter(ctx context.Context, s gateway.Store, appID string, now func() time.Time) (*Writer, error) {
	if now == nil {
		now = time.Now
	}
	w := &Writer{store: s, appID: appID, now: now, st: newState()}
	t, err := Open(ctx, s, "")
	if errors.Is(err, ErrNotDelta) {
		return w, nil
	}
	if err != nil {
		return nil, err
	}
	snap, err := t.Snapshot(ctx, -1)
	if err != nil {
		return nil, err
	}
	st := w.st
	st.version, st.protocol, st.metadata = snap.Version, &snap.Protocol, &snap.Metadata
	for _, a := range snap.Files {
		st.files[fileKey{a.Path, dvID(a.DeletionVector)}] = a
	}
	for _, r := range snap.Tombstones {
		st.tombstones[fileKey{r.Path, dvID(r.DeletionVector)}] = r
	}
	maps.Copy(st.txns, snap.Txns)
	if st.protoKey == "" {
		st.protoKey = LogDir
	}
	return w, w.checkWritable()
}

// MaxWriterVersion is the highest minWriterVersion a Writer appends to:
// 2 (append-only and column invariants are table properties it does not
// break: it writes nullable columns and never removes). A table that
// needs writer features (writer version 3 and up: CHECK constraints,
// generated columns, column mapping, row tracking, deletion vectors, …)
// is refused rather than written without honouring them.
const MaxWriterVersion = 2

// checkWritable refuses a table whose protocol asks more of a writer
// than MaxWriterVersion.
func (w *Writer) checkWritable() error {
	p := w.st.protocol
	if p == nil || p.MinWriterVersion <= MaxWriterVersion {
		return nil
	}
	feats := ""
	if len(p.WriterFeatures) > 0 {
		feats = " (writer features " + fmt.Sprint(p.WriterFeatures) + ")"
	}
	return fmt.Errorf("%w: %s: the table needs writer version %d%s; the ckgate Delta writer appends to writer version %d tables only",
		ErrUnsupportedProtocol, w.st.protoKey, p.MinWriterVersion, feats, MaxWriterVersion)
}

// Version is the table's latest version the writer knows (-1: no table).
func (w *Writer) Version() int64 { return w.st.version }

// Metadata is the table's metadata (nil: no table yet).
func (w *Writer) Metadata() *Metadata { return w.st.metadata }

// TxnVersion is the latest batch AppID committed (-1: none).
func (w *Writer) TxnVersion() int64 {
	if t, ok := w.st.txns[w.appID]; ok {
		return t.Version
	}
	return -1
}

// Files are the table's live data files, sorted by path.
func (w *Writer) Files() []Add {
	out := slices.Collect(maps.Values(w.st.files))
	slices.SortFunc(out, func(a, b Add) int { return cmp.Compare(a.Path, b.Path) })
	return out
}

// Prepare writes the data files of a batch for a table with metadata md
// (the one the commit follows) and returns their add actions. Append calls
// it again when a lost race shows other metadata.
type Prepare func(ctx context.Context, md *Metadata) ([]Add, error)

// AppendResult says what Append did.
type AppendResult struct {
	Skipped bool  // the table's txn for the app was at or above the batch
	Version int64 // the version committed (-1 when skipped)
	Adds    []Add // the add actions committed
	// Checkpoint is the checkpoint key written after the commit ("" for none).
	Checkpoint string
}

// Append commits batch: create is the table's protocol and metadata when
// there is no table yet (a commit at version 0 carries them), prepare
// writes the data files. See Writer.
func (w *Writer) Append(ctx context.Context, batch int64, create *Metadata, prepare Prepare) (AppendResult, error) {
	if w.TxnVersion() >= batch {
		return AppendResult{Skipped: true, Version: -1}, nil
	}
	var adds []Add
	var prepared *Metadata
	for {
		if err := w.checkWritable(); err != nil {
			return AppendResult{}, err
		}
		md := w.st.metadata
		if md == nil {
			if create == nil {
				return AppendResult{}, fmt.Errorf("%w: no table and no metadata to create one", ErrNotDelta)
			}
			md = create
		}
		if prepared == nil || !sameLayout(prepared, md) {
			var err error
			if adds, err = prepare(ctx, md); err != nil {
				return AppendResult{}, err
			}
			prepared = md
		}
		v := w.st.version + 1
		acts := w.actions(v, batch, md, adds)
		data, err := MarshalCommit(acts)
		if err != nil {
			return AppendResult{}, fmt.Errorf("commit %s: %w", CommitKey(v), err)
		}
		_, err = w.store.Put(ctx, CommitKey(v), data, gateway.IfAbsent())
		if err == nil {
			w.st.apply(CommitKey(v), acts)
			w.st.version = v
			res := AppendResult{Version: v, Adds: adds}
			if v > 0 && v%CheckpointInterval == 0 {
				key, err := w.checkpoint(ctx)
				if err != nil {
					return res, err
				}
				res.Checkpoint = key
			}
			return res, nil
		}
		if !errors.Is(err, gateway.ErrExists) {
			return AppendResult{}, fmt.Errorf("commit %s: %w", CommitKey(v), err)
		}
		w.Retries++
		if err := w.catchUp(ctx); err != nil {
			return AppendResult{}, err
		}
		if w.TxnVersion() >= batch {
			return AppendResult{Skipped: true, Version: -1}, nil
		}
	}
}

// sameLayout reports whether data files prepared for a stay valid for b:
// the same schema and partition columns (the table id does not show in a
// data file: a writer that lost the race to create the table keeps its
// files when the winner chose the same schema).
func sameLayout(a, b *Metadata) bool {
	return a.SchemaString == b.SchemaString && slices.Equal(a.PartitionColumns, b.PartitionColumns)
}

// catchUp reads the commits after the writer's version (the ones that
// won a race) and applies them. A new table id, or a protocol this
// package cannot read, is ErrConcurrentChange / a *ProtocolError.
func (w *Writer) catchUp(ctx context.Context) error {
	for {
		v := w.st.version + 1
		acts, err := ReadCommit(ctx, w.store, v)
		if errors.Is(err, gateway.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		old := w.st.metadata
		w.st.apply(CommitKey(v), acts)
		w.st.version = v
		if w.st.protocol == nil || w.st.metadata == nil {
			return fmt.Errorf("%w: %s: the table has no protocol or metaData after version %d", ErrCorrupt, CommitKey(v), v)
		}
		if err := w.st.protocol.Check(w.st.protoKey); err != nil {
			return err
		}
		if old != nil && old.ID != w.st.metadata.ID {
			return fmt.Errorf("%w: %s: the table id changed from %s to %s (the table was replaced)", ErrConcurrentChange, CommitKey(v), old.ID, w.st.metadata.ID)
		}
	}
}

// actions are the actions of the commit of batch at version v.
func (w *Writer) actions(v, batch int64, md *Metadata, adds []Add) []Action {
	now := w.now().UnixMilli()
	blind := true
	ci := &CommitInfo{Timestamp: now, Operation: OperationStreamingUpdate, IsolationLevel: "Serializable", IsBlindAppend: &blind,
		EngineInfo:          "ckgate",
		OperationParameters: map[string]any{"outputMode": "Append", "queryId": w.appID, "epochId": fmt.Sprint(batch)}}
	if v > 0 {
		rv := v - 1
		ci.ReadVersion = &rv
	}
	acts := []Action{{CommitInfo: ci}}
	if w.st.metadata == nil {
		acts = append(acts, Action{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}}, Action{MetaData: md})
	}
	acts = append(acts, Action{Txn: &Txn{AppID: w.appID, Version: batch, LastUpdated: &now}})
	for i := range adds {
		acts = append(acts, Action{Add: &adds[i]})
	}
	return acts
}

// checkpoint writes the classic checkpoint of the writer's version and
// then _last_checkpoint. A checkpoint another writer already wrote for the
// version is left as it is.
func (w *Writer) checkpoint(ctx context.Context) (string, error) {
	st := w.st
	acts := []Action{{Protocol: st.protocol}, {MetaData: st.metadata}}
	for _, id := range slices.Sorted(maps.Keys(st.txns)) {
		t := st.txns[id]
		acts = append(acts, Action{Txn: &t})
	}
	files := w.Files()
	for i := range files {
		acts = append(acts, Action{Add: &files[i]})
	}
	for _, k := range slices.SortedFunc(maps.Keys(st.tombstones), func(a, b fileKey) int { return cmp.Compare(a.path+"\x00"+a.dv, b.path+"\x00"+b.dv) }) {
		r := st.tombstones[k]
		acts = append(acts, Action{Remove: &r})
	}
	data, err := marshalClassicCheckpoint(acts)
	if err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", CheckpointKey(st.version), err)
	}
	key := CheckpointKey(st.version)
	if _, err := w.store.Put(ctx, key, data, gateway.IfAbsent()); err != nil && !errors.Is(err, gateway.ErrExists) {
		return "", fmt.Errorf("checkpoint %s: %w", key, err)
	}
	size, bytes := int64(len(acts)), int64(len(data))
	nadd := int64(len(files))
	lc, err := LastCheckpoint{Version: st.version, Size: size, SizeInBytes: &bytes, NumOfAddFiles: &nadd}.Marshal()
	if err != nil {
		return "", err
	}
	// a hint (readers check it against the listing): last writer wins
	if _, err := w.store.Put(ctx, LastCheckpointKey, lc, gateway.None()); err != nil {
		return "", fmt.Errorf("%s: %w", LastCheckpointKey, err)
	}
	return key, nil
}

// NewMetadata is the metaData of a new table: a fresh random (version 4)
// UUID as its id, the Spark schema JSON schema, no partition columns,
// parquet files, created now.
func NewMetadata(schema string, now time.Time) *Metadata {
	created := now.UnixMilli()
	return &Metadata{ID: NewUUID(), Format: Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString: schema, PartitionColumns: []string{}, Configuration: map[string]string{}, CreatedTime: &created}
}

// NewUUID is a random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b[:])
}

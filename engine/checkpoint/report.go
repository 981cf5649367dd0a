package checkpoint

import (
	"time"
)

// Status says where a checkpoint stands, from its offset and commit logs.
type Status string

const (
	// StatusClean: the latest offsets batch L is committed (C = L); a
	// restart plans batch L+1.
	StatusClean Status = "clean"
	// StatusInFlight: batch L has offsets but no commit (C = L-1, or no
	// commit log); a restart re-runs L with the same offsets and watermark.
	StatusInFlight Status = "in_flight"
	// StatusInconsistent: Spark would refuse to restart or would misbehave:
	// commits ahead of offsets, offsets/L-1 missing, metadata missing while
	// offsets exist, the latest entries unreadable.
	StatusInconsistent Status = "inconsistent"
	// StatusEmpty: a checkpoint with no batch yet.
	StatusEmpty Status = "empty"
)

// Report is what Inspect finds; its JSON form is `ckgate inspect
// --format json`.
type Report struct {
	QueryID            string            `json:"query_id"`
	Writer             Writer            `json:"writer"`
	Status             Status            `json:"status"`
	LatestOffsetsBatch *int64            `json:"latest_offsets_batch"`
	LatestCommitBatch  *int64            `json:"latest_commit_batch"`
	WatermarkMs        *int64            `json:"watermark_ms"`
	Confs              map[string]string `json:"confs"`
	// ConfDefaults are relevant confs missing from the latest offsets entry,
	// with the value Spark forces on restart.
	ConfDefaults map[string]string `json:"conf_defaults,omitempty"`
	Resume       *Resume           `json:"resume,omitempty"`
	Format       Format            `json:"format"`
	OffsetsLog   LogSummary        `json:"offsets_log"`
	CommitLog    LogSummary        `json:"commit_log"`
	Batches      []Batch           `json:"batches"`
	Sources      []Source          `json:"sources"`
	Operators    []Operator        `json:"operators"`
	Sink         *SinkReport       `json:"sink,omitempty"`
	StateBytes   int64             `json:"state_bytes"`
	TotalBytes   int64             `json:"total_bytes"`
	Files        int               `json:"files"`
	Findings     []Finding         `json:"findings"`
}

// HasErrors reports whether a finding has severity error.
func (r *Report) HasErrors() bool {
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// OK reports whether the checkpoint can be restarted as it is: status
// clean, in flight or empty, and no error finding. `ckgate inspect` exits 0
// exactly when OK holds.
func (r *Report) OK() bool {
	return r.Status != StatusInconsistent && !r.HasErrors()
}

// Writer says who writes the checkpoint.
type Writer struct {
	// Kind is "ckgate" when _ckgate/writer or _ckgate/plan.json exists,
	// else "spark".
	Kind      string     `json:"kind"`
	Epoch     uint64     `json:"epoch,omitempty"`
	Owner     string     `json:"owner,omitempty"`
	Principal string     `json:"principal,omitempty"`
	Since     *time.Time `json:"since,omitempty"`
	Heartbeat *time.Time `json:"heartbeat,omitempty"`
	// Live: the owner still holds its lease (at Options.Now).
	Live     bool `json:"live,omitempty"`
	Released bool `json:"released,omitempty"`
	// Plan: _ckgate/plan.json exists; PlanFingerprint is its "fingerprint".
	Plan            bool   `json:"plan"`
	PlanFingerprint string `json:"plan_fingerprint,omitempty"`
	SinkKind        string `json:"sink_kind,omitempty"`
}

// Writer kinds.
const (
	WriterSpark  = "spark"
	WriterCkgate = "ckgate"
)

// Resume says what a restart does.
type Resume struct {
	// NextBatch is the batch a restart runs first.
	NextBatch int64 `json:"next_batch"`
	// Rerun: NextBatch already has offsets and is re-run with them.
	Rerun bool `json:"rerun"`
	// StateVersion is the state version NextBatch loads (C+1).
	StateVersion int64  `json:"state_version"`
	Note         string `json:"note"`
}

// Format records the on-disk format versions seen.
type Format struct {
	OffsetLogVersion int `json:"offset_log_version,omitempty"`
	CommitLogVersion int `json:"commit_log_version,omitempty"`
	// CheckpointFormat is 2 when state files carry unique ids (Spark's
	// checkpoint format v2, ckgate's per-attempt names), else 1.
	CheckpointFormat int `json:"checkpoint_format"`
}

// Range is an inclusive range of ids [first, last].
type Range [2]int64

// LogSummary summarises the files of offsets/ or commits/.
type LogSummary struct {
	Count  int     `json:"count"`
	Ranges []Range `json:"ranges"`
}

// Batch is one detailed batch.
type Batch struct {
	ID          int64  `json:"id"`
	WatermarkMs *int64 `json:"watermark_ms,omitempty"`
	TimestampMs *int64 `json:"timestamp_ms,omitempty"`
	Time        string `json:"time,omitempty"` // TimestampMs in RFC 3339
	Committed   bool   `json:"committed"`
	// NextWatermarkMs is the commit's nextBatchWatermarkMs, when written.
	NextWatermarkMs *int64        `json:"next_watermark_ms,omitempty"`
	Epoch           uint64        `json:"epoch,omitempty"`
	Offsets         []BatchOffset `json:"offsets"`
}

// BatchOffset is one source's end offset in a batch.
type BatchOffset struct {
	Source string `json:"source"`
	SourceOffset
}

// Source is one input source of the query.
type Source struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Offset is the source's end offset in the latest offsets batch.
	Offset *SourceOffset `json:"offset,omitempty"`
	Log    *SourceLog    `json:"log,omitempty"`
}

// SourceLog describes sources/<id>/.
type SourceLog struct {
	Dir           string `json:"dir"`
	Files         int    `json:"files"`
	LatestBatch   *int64 `json:"latest_batch,omitempty"`
	LatestCompact *int64 `json:"latest_compact,omitempty"`
	SourceLogInfo
}

// Operator is one stateful operator: state/<id>/.
type Operator struct {
	ID              string        `json:"id"`
	Name            string        `json:"name,omitempty"`
	Provider        string        `json:"provider"`
	MetadataVersion int           `json:"metadata_version,omitempty"`
	NumPartitions   int           `json:"num_partitions"`
	Stores          []StoreReport `json:"stores"`
	Files           int           `json:"files"`
	Bytes           int64         `json:"bytes"`
}

// State store providers.
const (
	ProviderHDFS    = "hdfs"
	ProviderRocksDB = "rocksdb"
	ProviderUnknown = "unknown"
)

// StoreReport is one state store of an operator across its partitions.
type StoreReport struct {
	Name          string               `json:"name"`
	SchemaVersion int                  `json:"schema_version,omitempty"`
	Schema        []ColumnFamilySchema `json:"schema,omitempty"`
	// Rebuildable: every partition can rebuild the version a restart loads.
	Rebuildable bool              `json:"rebuildable"`
	Partitions  []PartitionReport `json:"partitions"`
}

// PartitionReport is one partition of one store.
type PartitionReport struct {
	ID             int     `json:"id"`
	Versions       []Range `json:"versions"`
	LatestVersion  int64   `json:"latest_version"`
	Snapshots      int     `json:"snapshots"`
	LatestSnapshot *int64  `json:"latest_snapshot,omitempty"`
	Files          int     `json:"files"`
	Bytes          int64   `json:"bytes"`
	// RequiredVersion is the version a restart loads; Rebuildable says
	// whether it can be built: from RebuildFrom (a snapshot or zip version;
	// 0 = the empty state) plus RebuildFiles change files.
	RequiredVersion int64           `json:"required_version"`
	Rebuildable     bool            `json:"rebuildable"`
	RebuildFrom     *int64          `json:"rebuild_from,omitempty"`
	RebuildFiles    int             `json:"rebuild_files"`
	Problem         string          `json:"problem,omitempty"`
	Details         []VersionDetail `json:"details,omitempty"`
	// RebuildKeys are the keys a restart reads to build RequiredVersion:
	// the chain's files and the SST and log files its base zip names
	// (retention must keep every one; not in the JSON report).
	RebuildKeys []string `json:"-"`
}

// VersionDetail is one decoded state file.
type VersionDetail struct {
	Version   int64  `json:"version"`
	Kind      string `json:"kind"`
	UniqueID  string `json:"unique_id,omitempty"`
	Key       string `json:"key"`
	Bytes     int64  `json:"bytes"`
	Puts      *int64 `json:"puts,omitempty"`
	Deletes   *int64 `json:"deletes,omitempty"`
	Merges    *int64 `json:"merges,omitempty"`
	NumKeys   *int64 `json:"num_keys,omitempty"`  // RocksDB zip metadata
	SSTFiles  *int   `json:"sst_files,omitempty"` // RocksDB zip metadata
	Changelog int    `json:"changelog_version,omitempty"`
	Note      string `json:"note,omitempty"`
}

// SinkReport describes the file sink log of Options.Sink.
type SinkReport struct {
	Dir             string `json:"dir"`
	LatestBatch     *int64 `json:"latest_batch,omitempty"`
	CompactInterval int    `json:"compact_interval,omitempty"`
	Files           int    `json:"files"`
	// CommittedLatestOffsets: the sink already holds batch L (a re-run of
	// L will be skipped by the file sink).
	CommittedLatestOffsets bool `json:"committed_latest_offsets"`
	// Owner is the latest entry of the sink's owner log (_ckgate/sink-owner/),
	// absent for a sink written without one (Spark, an earlier ckgate).
	Owner *SinkOwner `json:"owner,omitempty"`
}

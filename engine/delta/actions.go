package delta

import "encoding/json"

// Action is one line of a commit file (or one row of a checkpoint): exactly
// one field is set. Fields for actions this package does not model (cdc,
// domainMetadata, …) are kept raw so a line is never misread as empty.
type Action struct {
	Txn                *Txn                `json:"txn,omitempty"`
	Add                *Add                `json:"add,omitempty"`
	Remove             *Remove             `json:"remove,omitempty"`
	MetaData           *Metadata           `json:"metaData,omitempty"`
	Protocol           *Protocol           `json:"protocol,omitempty"`
	CommitInfo         *CommitInfo         `json:"commitInfo,omitempty"`
	CheckpointMetadata *CheckpointMetadata `json:"checkpointMetadata,omitempty"`
	Sidecar            *Sidecar            `json:"sidecar,omitempty"`
	CDC                json.RawMessage     `json:"cdc,omitempty"`
	DomainMetadata     json.RawMessage     `json:"domainMetadata,omitempty"`
}

// Protocol is the protocol action: the reader and writer versions and, from
// reader version 3 / writer version 7, the table features.
type Protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures,omitempty"`
	WriterFeatures   []string `json:"writerFeatures,omitempty"`
}

// Format is the data file format of a table (provider "parquet").
type Format struct {
	Provider string            `json:"provider"`
	Options  map[string]string `json:"options"`
}

// Metadata is the metaData action. ID is the table id: a streaming source
// records it as reservoirId; CREATE OR REPLACE writes a new one.
type Metadata struct {
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Format           Format            `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	Configuration    map[string]string `json:"configuration"`
	CreatedTime      *int64            `json:"createdTime,omitempty"`
}

// DeletionVector is the deletionVector field of add and remove actions.
// StorageType "u": PathOrInlineDv is an optional prefix plus the file's
// UUID in Z85 (the file is <prefix>/deletion_vector_<uuid>.bin under the
// table); "p": an absolute path; "i": the vector inline (no file).
type DeletionVector struct {
	StorageType    string `json:"storageType"`
	PathOrInlineDv string `json:"pathOrInlineDv"`
	Offset         *int32 `json:"offset,omitempty"`
	SizeInBytes    int32  `json:"sizeInBytes"`
	Cardinality    int64  `json:"cardinality"`
	MaxRowIndex    *int64 `json:"maxRowIndex,omitempty"`
}

// Add is the add action: a data file that is part of the table from its
// commit on. Path is URI encoded, relative to the table root or absolute.
type Add struct {
	Path                    string            `json:"path"`
	PartitionValues         map[string]string `json:"partitionValues"`
	Size                    int64             `json:"size"`
	ModificationTime        int64             `json:"modificationTime"`
	DataChange              bool              `json:"dataChange"`
	Stats                   string            `json:"stats,omitempty"`
	Tags                    map[string]string `json:"tags,omitempty"`
	DeletionVector          *DeletionVector   `json:"deletionVector,omitempty"`
	BaseRowID               *int64            `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64            `json:"defaultRowCommitVersion,omitempty"`
	ClusteringProvider      string            `json:"clusteringProvider,omitempty"`
}

// Remove is the remove action: a tombstone; VACUUM deletes the file once
// DeletionTimestamp is older than delta.deletedFileRetentionDuration.
type Remove struct {
	Path                    string            `json:"path"`
	DeletionTimestamp       *int64            `json:"deletionTimestamp,omitempty"`
	DataChange              bool              `json:"dataChange"`
	ExtendedFileMetadata    *bool             `json:"extendedFileMetadata,omitempty"`
	PartitionValues         map[string]string `json:"partitionValues,omitempty"`
	Size                    *int64            `json:"size,omitempty"`
	Tags                    map[string]string `json:"tags,omitempty"`
	DeletionVector          *DeletionVector   `json:"deletionVector,omitempty"`
	BaseRowID               *int64            `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64            `json:"defaultRowCommitVersion,omitempty"`
}

// Txn is the txn (set transaction) action: the last version an application
// (a streaming query id, or foreachBatch's txnAppId) committed.
type Txn struct {
	AppID       string `json:"appId"`
	Version     int64  `json:"version"`
	LastUpdated *int64 `json:"lastUpdated,omitempty"`
}

// CommitInfo is the commitInfo action (free-form in the protocol; these
// are the fields Spark writes that ckgate reads). A streaming sink writes
// Operation "STREAMING UPDATE" with OperationParameters queryId and epochId.
type CommitInfo struct {
	Timestamp           int64          `json:"timestamp,omitempty"`
	InCommitTimestamp   *int64         `json:"inCommitTimestamp,omitempty"`
	Operation           string         `json:"operation,omitempty"`
	OperationParameters map[string]any `json:"operationParameters,omitempty"`
	ReadVersion         *int64         `json:"readVersion,omitempty"`
	IsolationLevel      string         `json:"isolationLevel,omitempty"`
	IsBlindAppend       *bool          `json:"isBlindAppend,omitempty"`
	OperationMetrics    map[string]any `json:"operationMetrics,omitempty"`
	EngineInfo          string         `json:"engineInfo,omitempty"`
	TxnID               string         `json:"txnId,omitempty"`
}

// OperationStreamingUpdate is the commitInfo operation of a streaming sink.
const OperationStreamingUpdate = "STREAMING UPDATE"

// CheckpointMetadata is the first action of a v2 checkpoint.
type CheckpointMetadata struct {
	Version int64             `json:"version"`
	Tags    map[string]string `json:"tags,omitempty"`
}

// Sidecar names a file under _delta_log/_sidecars/ holding add and remove
// actions of a v2 checkpoint.
type Sidecar struct {
	Path             string            `json:"path"`
	SizeInBytes      int64             `json:"sizeInBytes"`
	ModificationTime int64             `json:"modificationTime"`
	Tags             map[string]string `json:"tags,omitempty"`
}

// Reader features (PROTOCOL.md "Table Features").
const (
	FeatureCatalogManaged      = "catalogManaged"
	featureCatalogOwnedPreview = "catalogOwned-preview"
	FeatureDeletionVectors     = "deletionVectors"
	FeatureColumnMapping       = "columnMapping"
	FeatureTimestampNtz        = "timestampNtz"
	FeatureTypeWidening        = "typeWidening"
	FeatureTypeWideningPreview = "typeWidening-preview"
	FeatureVariantType         = "variantType"
	FeatureVariantTypePreview  = "variantType-preview"
	FeatureVacuumProtocolCheck = "vacuumProtocolCheck"
	FeatureV2Checkpoint        = "v2Checkpoint"
	FeatureVariantShredding    = "variantShredding-preview"
)

// MaxReaderVersion is the highest minReaderVersion this package reads.
const MaxReaderVersion = 3

// readerFeatures are the reader features this package acknowledges: none
// of them changes which log files or data files make up a version.
var readerFeatures = map[string]bool{
	FeatureDeletionVectors: true, FeatureColumnMapping: true, FeatureTimestampNtz: true,
	FeatureTypeWidening: true, FeatureTypeWideningPreview: true, FeatureVariantType: true,
	FeatureVariantTypePreview: true, FeatureVacuumProtocolCheck: true, FeatureV2Checkpoint: true,
	FeatureVariantShredding: true,
}

// Check returns nil when this package can read a table with protocol p (set
// by the log file key), else a *ProtocolError: a reader version above
// MaxReaderVersion, the catalogManaged feature, or an unknown reader feature.
func (p Protocol) Check(key string) error {
	if p.MinReaderVersion < 1 || p.MinReaderVersion > MaxReaderVersion {
		return &ProtocolError{Key: key, MinReaderVersion: p.MinReaderVersion}
	}
	var bad []string
	for _, f := range p.ReaderFeatures {
		if !readerFeatures[f] {
			bad = append(bad, f)
		}
	}
	if len(bad) > 0 {
		return &ProtocolError{Key: key, MinReaderVersion: p.MinReaderVersion, Features: bad}
	}
	return nil
}

// HasReaderFeature reports whether f is among the table's reader features.
func (p Protocol) HasReaderFeature(f string) bool {
	for _, x := range p.ReaderFeatures {
		if x == f {
			return true
		}
	}
	return false
}

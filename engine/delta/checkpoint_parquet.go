package delta

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// MaxCheckpointBytes bounds one checkpoint (or sidecar) file read whole:
// 1 GiB. A parquet file is read through its footer, so it is held in memory.
const MaxCheckpointBytes = 1 << 30

// The checkpoint schema (PROTOCOL.md "Checkpoint Schema"): every column
// optional, so that a checkpoint written by an older Delta (no
// deletionVector, no tags) or by delta-rs reads the same. A struct that is
// present with every leaf null (delta-rs writes deletionVector so) is
// treated as absent by looking at a required leaf.
type pqDV struct {
	StorageType    *string `parquet:"storageType,optional"`
	PathOrInlineDv *string `parquet:"pathOrInlineDv,optional"`
	Offset         *int32  `parquet:"offset,optional"`
	SizeInBytes    *int32  `parquet:"sizeInBytes,optional"`
	Cardinality    *int64  `parquet:"cardinality,optional"`
	MaxRowIndex    *int64  `parquet:"maxRowIndex,optional"`
}

type pqAdd struct {
	Path                    *string           `parquet:"path,optional"`
	PartitionValues         map[string]string `parquet:"partitionValues,optional"`
	Size                    *int64            `parquet:"size,optional"`
	ModificationTime        *int64            `parquet:"modificationTime,optional"`
	DataChange              *bool             `parquet:"dataChange,optional"`
	Stats                   *string           `parquet:"stats,optional"`
	Tags                    map[string]string `parquet:"tags,optional"`
	DeletionVector          *pqDV             `parquet:"deletionVector,optional"`
	BaseRowID               *int64            `parquet:"baseRowId,optional"`
	DefaultRowCommitVersion *int64            `parquet:"defaultRowCommitVersion,optional"`
	ClusteringProvider      *string           `parquet:"clusteringProvider,optional"`
}

type pqRemove struct {
	Path                    *string           `parquet:"path,optional"`
	DeletionTimestamp       *int64            `parquet:"deletionTimestamp,optional"`
	DataChange              *bool             `parquet:"dataChange,optional"`
	ExtendedFileMetadata    *bool             `parquet:"extendedFileMetadata,optional"`
	PartitionValues         map[string]string `parquet:"partitionValues,optional"`
	Size                    *int64            `parquet:"size,optional"`
	DeletionVector          *pqDV             `parquet:"deletionVector,optional"`
	BaseRowID               *int64            `parquet:"baseRowId,optional"`
	DefaultRowCommitVersion *int64            `parquet:"defaultRowCommitVersion,optional"`
}

type pqTxn struct {
	AppID       *string `parquet:"appId,optional"`
	Version     *int64  `parquet:"version,optional"`
	LastUpdated *int64  `parquet:"lastUpdated,optional"`
}

type pqFormat struct {
	Provider *string           `parquet:"provider,optional"`
	Options  map[string]string `parquet:"options,optional"`
}

type pqMetadata struct {
	ID               *string           `parquet:"id,optional"`
	Name             *string           `parquet:"name,optional"`
	Description      *string           `parquet:"description,optional"`
	Format           *pqFormat         `parquet:"format,optional"`
	SchemaString     *string           `parquet:"schemaString,optional"`
	PartitionColumns []string          `parquet:"partitionColumns,optional,list"`
	Configuration    map[string]string `parquet:"configuration,optional"`
	CreatedTime      *int64            `parquet:"createdTime,optional"`
}

type pqProtocol struct {
	MinReaderVersion *int32   `parquet:"minReaderVersion,optional"`
	MinWriterVersion *int32   `parquet:"minWriterVersion,optional"`
	ReaderFeatures   []string `parquet:"readerFeatures,optional,list"`
	WriterFeatures   []string `parquet:"writerFeatures,optional,list"`
}

type pqCheckpointMetadata struct {
	Version *int64            `parquet:"version,optional"`
	Tags    map[string]string `parquet:"tags,optional"`
}

type pqSidecar struct {
	Path             *string           `parquet:"path,optional"`
	SizeInBytes      *int64            `parquet:"sizeInBytes,optional"`
	ModificationTime *int64            `parquet:"modificationTime,optional"`
	Tags             map[string]string `parquet:"tags,optional"`
}

// checkpointRow is one row of a checkpoint parquet file: one action.
type checkpointRow struct {
	Txn                *pqTxn                `parquet:"txn,optional"`
	Add                *pqAdd                `parquet:"add,optional"`
	Remove             *pqRemove             `parquet:"remove,optional"`
	MetaData           *pqMetadata           `parquet:"metaData,optional"`
	Protocol           *pqProtocol           `parquet:"protocol,optional"`
	CheckpointMetadata *pqCheckpointMetadata `parquet:"checkpointMetadata,optional"`
	Sidecar            *pqSidecar            `parquet:"sidecar,optional"`
}

// ParseCheckpointParquet reads the actions of a checkpoint (or sidecar)
// parquet file; key names it in errors. Rows that hold no action (a
// column of another action only) are skipped.
func ParseCheckpointParquet(key string, data []byte) (out []Action, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, corruptf(key, "not a readable parquet checkpoint: %v", r)
		}
	}()
	// parquet-go allocates the footer length the file announces before
	// checking it against the file: check it here.
	if n := len(data); n < 12 || string(data[:4]) != "PAR1" || string(data[n-4:]) != "PAR1" {
		return nil, corruptf(key, "not a parquet file (no PAR1 magic at both ends)")
	} else if fl := int64(binary.LittleEndian.Uint32(data[n-8 : n-4])); fl > int64(n-12) {
		return nil, corruptf(key, "parquet footer of %d bytes announced in a file of %d bytes", fl, n)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, corruptf(key, "not a parquet file: %v", err)
	}
	if n := f.NumRows(); n < 0 || n > int64(len(data))*8+1024 {
		return nil, corruptf(key, "footer announces %d rows in %d bytes", n, len(data))
	}
	r := parquet.NewGenericReader[checkpointRow](f)
	defer r.Close()
	buf := make([]checkpointRow, 256)
	row := 0
	for {
		clear(buf)
		n, rerr := r.Read(buf)
		for i := 0; i < n; i++ {
			row++
			a, err := buf[i].action()
			if err != nil {
				return nil, corruptf(key, "row %d: %v", row, err)
			}
			if !a.empty() {
				out = append(out, a)
			}
		}
		if rerr == io.EOF {
			return out, nil
		}
		if rerr != nil {
			return nil, corruptf(key, "row %d: %v", row+1, rerr)
		}
		if n == 0 {
			return nil, corruptf(key, "reader made no progress at row %d", row)
		}
	}
}

func (a Action) empty() bool {
	return a.Txn == nil && a.Add == nil && a.Remove == nil && a.MetaData == nil && a.Protocol == nil &&
		a.CommitInfo == nil && a.CheckpointMetadata == nil && a.Sidecar == nil && a.CDC == nil && a.DomainMetadata == nil
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func i64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func (d *pqDV) dv() *DeletionVector {
	if d == nil || d.StorageType == nil || *d.StorageType == "" { // all-null struct: no vector
		return nil
	}
	out := &DeletionVector{StorageType: *d.StorageType, PathOrInlineDv: str(d.PathOrInlineDv), Offset: d.Offset,
		Cardinality: i64(d.Cardinality), MaxRowIndex: d.MaxRowIndex}
	if d.SizeInBytes != nil {
		out.SizeInBytes = *d.SizeInBytes
	}
	return out
}

func (r *checkpointRow) action() (Action, error) {
	var a Action
	if x := r.Add; x != nil && x.Path != nil {
		a.Add = &Add{Path: *x.Path, PartitionValues: x.PartitionValues, Size: i64(x.Size), ModificationTime: i64(x.ModificationTime),
			DataChange: x.DataChange != nil && *x.DataChange, Stats: str(x.Stats), Tags: x.Tags, DeletionVector: x.DeletionVector.dv(),
			BaseRowID: x.BaseRowID, DefaultRowCommitVersion: x.DefaultRowCommitVersion, ClusteringProvider: str(x.ClusteringProvider)}
	}
	if x := r.Remove; x != nil && x.Path != nil {
		a.Remove = &Remove{Path: *x.Path, DeletionTimestamp: x.DeletionTimestamp, DataChange: x.DataChange != nil && *x.DataChange,
			ExtendedFileMetadata: x.ExtendedFileMetadata, PartitionValues: x.PartitionValues, Size: x.Size,
			DeletionVector: x.DeletionVector.dv(), BaseRowID: x.BaseRowID, DefaultRowCommitVersion: x.DefaultRowCommitVersion}
	}
	if x := r.Txn; x != nil && x.AppID != nil {
		if x.Version == nil {
			return a, fmt.Errorf("txn %q without a version", *x.AppID)
		}
		a.Txn = &Txn{AppID: *x.AppID, Version: *x.Version, LastUpdated: x.LastUpdated}
	}
	if x := r.MetaData; x != nil && x.ID != nil {
		m := &Metadata{ID: *x.ID, Name: str(x.Name), Description: str(x.Description), SchemaString: str(x.SchemaString),
			PartitionColumns: x.PartitionColumns, Configuration: x.Configuration, CreatedTime: x.CreatedTime}
		if x.Format != nil {
			m.Format = Format{Provider: str(x.Format.Provider), Options: x.Format.Options}
		}
		a.MetaData = m
	}
	if x := r.Protocol; x != nil && x.MinReaderVersion != nil {
		p := &Protocol{MinReaderVersion: int(*x.MinReaderVersion), ReaderFeatures: x.ReaderFeatures, WriterFeatures: x.WriterFeatures}
		if x.MinWriterVersion != nil {
			p.MinWriterVersion = int(*x.MinWriterVersion)
		}
		a.Protocol = p
	}
	if x := r.CheckpointMetadata; x != nil && x.Version != nil {
		a.CheckpointMetadata = &CheckpointMetadata{Version: *x.Version, Tags: x.Tags}
	}
	if x := r.Sidecar; x != nil && x.Path != nil {
		a.Sidecar = &Sidecar{Path: *x.Path, SizeInBytes: i64(x.SizeInBytes), ModificationTime: i64(x.ModificationTime), Tags: x.Tags}
	}
	return a, a.validate()
}

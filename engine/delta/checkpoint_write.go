package delta

import (
	"bytes"
	"fmt"

	"github.com/parquet-go/parquet-go"
)

// MarshalCheckpointParquet returns a classic checkpoint parquet file
// holding actions (one row each, in order; commitInfo is not part of a
// checkpoint and is refused), in the schema ParseCheckpointParquet reads
// and Delta's checkpoint schema names: a top-level optional struct per
// action kind.
func MarshalCheckpointParquet(actions []Action) ([]byte, error) {
	rows := make([]checkpointRow, 0, len(actions))
	for i, a := range actions {
		if err := a.validate(); err != nil {
			return nil, fmt.Errorf("action %d: %w", i, err)
		}
		if a.CommitInfo != nil || a.CDC != nil || a.DomainMetadata != nil {
			return nil, fmt.Errorf("action %d: commitInfo, cdc and domainMetadata are not written to a checkpoint by this writer", i)
		}
		rows = append(rows, rowOf(a))
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[checkpointRow](&buf, parquet.Compression(&parquet.Snappy))
	if _, err := w.Write(rows); err != nil {
		return nil, fmt.Errorf("checkpoint parquet: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("checkpoint parquet: %w", err)
	}
	return buf.Bytes(), nil
}

func ptr[T any](v T) *T { return &v }

func pqdv(d *DeletionVector) *pqDV {
	if d == nil {
		return nil
	}
	return &pqDV{StorageType: ptr(d.StorageType), PathOrInlineDv: ptr(d.PathOrInlineDv), Offset: d.Offset,
		SizeInBytes: ptr(d.SizeInBytes), Cardinality: ptr(d.Cardinality), MaxRowIndex: d.MaxRowIndex}
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func rowOf(a Action) checkpointRow {
	var r checkpointRow
	if x := a.Add; x != nil {
		r.Add = &pqAdd{Path: ptr(x.Path), PartitionValues: nonNil(x.PartitionValues), Size: ptr(x.Size), ModificationTime: ptr(x.ModificationTime),
			DataChange: ptr(x.DataChange), Stats: optStr(x.Stats), Tags: x.Tags, DeletionVector: pqdv(x.DeletionVector),
			BaseRowID: x.BaseRowID, DefaultRowCommitVersion: x.DefaultRowCommitVersion, ClusteringProvider: optStr(x.ClusteringProvider)}
	}
	if x := a.Remove; x != nil {
		r.Remove = &pqRemove{Path: ptr(x.Path), DeletionTimestamp: x.DeletionTimestamp, DataChange: ptr(x.DataChange),
			ExtendedFileMetadata: x.ExtendedFileMetadata, PartitionValues: x.PartitionValues, Size: x.Size,
			DeletionVector: pqdv(x.DeletionVector), BaseRowID: x.BaseRowID, DefaultRowCommitVersion: x.DefaultRowCommitVersion}
	}
	if x := a.Txn; x != nil {
		r.Txn = &pqTxn{AppID: ptr(x.AppID), Version: ptr(x.Version), LastUpdated: x.LastUpdated}
	}
	if x := a.MetaData; x != nil {
		r.MetaData = &pqMetadata{ID: ptr(x.ID), Name: optStr(x.Name), Description: optStr(x.Description),
			Format: &pqFormat{Provider: ptr(x.Format.Provider), Options: nonNil(x.Format.Options)}, SchemaString: ptr(x.SchemaString),
			PartitionColumns: x.PartitionColumns, Configuration: nonNil(x.Configuration), CreatedTime: x.CreatedTime}
	}
	if x := a.Protocol; x != nil {
		r.Protocol = &pqProtocol{MinReaderVersion: ptr(int32(x.MinReaderVersion)), MinWriterVersion: ptr(int32(x.MinWriterVersion)),
			ReaderFeatures: x.ReaderFeatures, WriterFeatures: x.WriterFeatures}
	}
	if x := a.CheckpointMetadata; x != nil {
		r.CheckpointMetadata = &pqCheckpointMetadata{Version: ptr(x.Version), Tags: x.Tags}
	}
	if x := a.Sidecar; x != nil {
		r.Sidecar = &pqSidecar{Path: ptr(x.Path), SizeInBytes: ptr(x.SizeInBytes), ModificationTime: ptr(x.ModificationTime), Tags: x.Tags}
	}
	return r
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

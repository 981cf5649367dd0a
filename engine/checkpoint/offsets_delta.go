package checkpoint

import (
	"fmt"
	"strconv"
	"strings"
)

// Offset kinds of the lakehouse table sources.
const (
	OffsetDelta   = "delta"   // DeltaSourceOffset {"sourceVersion":1,"reservoirId":…,"reservoirVersion":N,"index":I,"isStartingVersion":B}
	OffsetIceberg = "iceberg" // Iceberg StreamingOffset {"version":1,"snapshot_id":N,"position":P,"scan_all_files":B}
)

// Index values of a Delta source offset (DeltaSourceOffset in delta-io/delta).
const (
	DeltaBaseIndex          = -1   // before every file of the version
	DeltaBaseIndexV3        = -100 // the base index sourceVersion 3 may write
	DeltaMetadataChange     = -20  // a metadata (schema) change at the version
	DeltaPostMetadataChange = -19  // just after it
)

// DeltaSourceOffset is the offset of a Delta Lake streaming source.
// ReservoirID is the table id (metaData.id) the stream read; a table with
// another id at the same path is another table to Spark
// (DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE).
type DeltaSourceOffset struct {
	SourceVersion     int    `json:"source_version"`
	ReservoirID       string `json:"reservoir_id"`
	ReservoirVersion  int64  `json:"reservoir_version"`
	Index             int64  `json:"index"`
	IsStartingVersion bool   `json:"is_starting_version"`
}

// DecodeDeltaSourceOffset decodes a Delta source offset. sourceVersion 1
// and 3 are read (3 only with its own indexes: -100, -20, -19, or >= -1); 2
// was never valid and is ErrCorrupt; a higher one is a *VersionError. Every
// field is required.
func DecodeDeltaSourceOffset(s string) (DeltaSourceOffset, error) {
	m, err := decodeObject(s)
	if err != nil {
		return DeltaSourceOffset{}, err
	}
	sv, ok := jsonInt(m["sourceVersion"])
	if !ok {
		return DeltaSourceOffset{}, corruptf("delta source offset: no integer \"sourceVersion\"")
	}
	switch {
	case sv == 2 || sv < 1:
		return DeltaSourceOffset{}, corruptf("delta source offset: sourceVersion %d is not valid (Delta writes 1 or 3)", sv)
	case sv > 3:
		return DeltaSourceOffset{}, &VersionError{What: "delta source offset", Found: int(min(sv, 1<<30)), Max: 3}
	}
	id, ok := m["reservoirId"].(string)
	if !ok || strings.TrimSpace(id) == "" {
		return DeltaSourceOffset{}, corruptf("delta source offset: no \"reservoirId\" (the table id)")
	}
	v, ok := jsonInt(m["reservoirVersion"])
	if !ok || v < 0 {
		return DeltaSourceOffset{}, corruptf("delta source offset: \"reservoirVersion\" is not a version >= 0")
	}
	idx, ok := jsonInt(m["index"])
	if !ok {
		return DeltaSourceOffset{}, corruptf("delta source offset: no integer \"index\"")
	}
	special := idx == DeltaBaseIndexV3 || idx == DeltaMetadataChange || idx == DeltaPostMetadataChange
	if idx < DeltaBaseIndex && !(sv == 3 && special) {
		return DeltaSourceOffset{}, corruptf("delta source offset: index %d is not valid with sourceVersion %d", idx, sv)
	}
	start, ok := m["isStartingVersion"].(bool)
	if !ok {
		return DeltaSourceOffset{}, corruptf("delta source offset: no boolean \"isStartingVersion\"")
	}
	return DeltaSourceOffset{SourceVersion: int(sv), ReservoirID: id, ReservoirVersion: v, Index: idx, IsStartingVersion: start}, nil
}

// BeforeEveryFile reports whether the offset is before every file of its
// version (the base index of either source version, or a metadata change).
func (o DeltaSourceOffset) BeforeEveryFile() bool { return o.Index < 0 }

func (o DeltaSourceOffset) String() string {
	s := fmt.Sprintf("delta table %s version %d", o.ReservoirID, o.ReservoirVersion)
	switch {
	case o.Index == DeltaMetadataChange:
		s += " (metadata change)"
	case o.Index == DeltaPostMetadataChange:
		s += " (after a metadata change)"
	case o.Index >= 0:
		s += " after file " + strconv.FormatInt(o.Index, 10)
	}
	if o.IsStartingVersion {
		s += " (initial snapshot)"
	}
	return s
}

// IcebergSourceOffset is the offset of an Iceberg streaming source
// (StreamingOffset in apache/iceberg's spark module).
type IcebergSourceOffset struct {
	Version      int   `json:"version"`
	SnapshotID   int64 `json:"snapshot_id"`
	Position     int64 `json:"position"`
	ScanAllFiles bool  `json:"scan_all_files"`
}

// DecodeIcebergSourceOffset decodes an Iceberg source offset; version 1 is
// the only one Iceberg writes (another is a *VersionError).
func DecodeIcebergSourceOffset(s string) (IcebergSourceOffset, error) {
	m, err := decodeObject(s)
	if err != nil {
		return IcebergSourceOffset{}, err
	}
	v, ok := jsonInt(m["version"])
	if !ok {
		return IcebergSourceOffset{}, corruptf("iceberg source offset: no integer \"version\"")
	}
	if v != 1 {
		return IcebergSourceOffset{}, &VersionError{What: "iceberg source offset", Found: int(max(min(v, 1<<30), -1<<30)), Max: 1}
	}
	id, ok := jsonInt(m["snapshot_id"])
	if !ok {
		return IcebergSourceOffset{}, corruptf("iceberg source offset: no integer \"snapshot_id\"")
	}
	pos, ok := jsonInt(m["position"])
	if !ok || pos < 0 {
		return IcebergSourceOffset{}, corruptf("iceberg source offset: \"position\" is not a position >= 0")
	}
	all, ok := m["scan_all_files"].(bool)
	if !ok {
		return IcebergSourceOffset{}, corruptf("iceberg source offset: no boolean \"scan_all_files\"")
	}
	return IcebergSourceOffset{Version: 1, SnapshotID: id, Position: pos, ScanAllFiles: all}, nil
}

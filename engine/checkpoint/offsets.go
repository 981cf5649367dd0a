package checkpoint

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// OffsetLogMaxVersion is the highest offset log version understood: v1
// (every released Spark) and v2 (OffsetMap, Spark master).
const OffsetLogMaxVersion = 2

// OffsetSeq is one offsets/<N> file: the write-ahead entry of batch N.
//
//	v1:  "v1" \n <metadata JSON or empty> \n <offset JSON | -> (one line per source, by position)
//	v2:  "v2" \n <metadata JSON> \n <sourceId>:<offset JSON | -> ...
//
// Spark writes no trailing newline; one is accepted.
type OffsetSeq struct {
	Version  int
	Metadata *OffsetSeqMetadata // nil when the metadata line is empty (v1)
	Sources  []OffsetEntry
}

// OffsetEntry is one source's end offset in a batch.
type OffsetEntry struct {
	// ID names the source: its position ("0", "1", …) in v1, the source id in v2.
	ID string
	// JSON is the serialized offset, as the source wrote it.
	JSON string
	// Present is false for "-": the source had no offset yet.
	Present bool
}

// OffsetSeqMetadata is the metadata line (OffsetSeqMetadata and v2's
// OffsetSeqMetadataV2). Missing fields take Spark's defaults (0, empty).
type OffsetSeqMetadata struct {
	BatchWatermarkMs int64             `json:"batchWatermarkMs"`
	BatchTimestampMs int64             `json:"batchTimestampMs"`
	Conf             map[string]string `json:"conf,omitempty"`
	// SourceMetadataInfo and ControlBatchInfo are v2 fields, kept verbatim.
	SourceMetadataInfo json.RawMessage `json:"sourceMetadataInfo,omitempty"`
	ControlBatchInfo   json.RawMessage `json:"controlBatchInfo,omitempty"`
	// Epoch is the ckgate writer epoch that wrote the entry (0: none, e.g.
	// written by Spark). Spark ignores the unknown field.
	Epoch uint64 `json:"ckgateEpoch,omitempty"`
}

// DecodeOffsetSeq decodes an offsets/<N> file.
func DecodeOffsetSeq(data []byte) (*OffsetSeq, error) {
	lines, v, err := versionedLines(data, OffsetLogMaxVersion, "offset log", "incomplete offset log file (empty)")
	if err != nil {
		return nil, err
	}
	if len(lines) < 2 {
		return nil, truncatedf("offset log file has no metadata line")
	}
	seq := &OffsetSeq{Version: v}
	if md := strings.TrimSpace(lines[1]); md != "" {
		var m OffsetSeqMetadata
		if err := json.Unmarshal([]byte(md), &m); err != nil {
			return nil, jsonErr("offset log metadata", err)
		}
		seq.Metadata = &m
	} else if v >= 2 {
		return nil, corruptf("offset log v2 without metadata")
	}
	for i, l := range lines[2:] {
		e := OffsetEntry{ID: strconv.Itoa(i)}
		if v >= 2 {
			id, rest, ok := strings.Cut(l, ":")
			if !ok || id == "" {
				return nil, corruptf("offset log v2 line %d is not <sourceId>:<offset>", i+3)
			}
			e.ID, l = id, rest
		}
		if l != "-" {
			e.JSON, e.Present = l, true
		}
		seq.Sources = append(seq.Sources, e)
	}
	return seq, nil
}

// Encode returns the file Spark (and ckgate's engine) writes: no trailing
// newline, conf keys sorted.
func (s OffsetSeq) Encode() ([]byte, error) {
	v, err := encodeVersion(s.Version, 1, OffsetLogMaxVersion, "offset log")
	if err != nil {
		return nil, err
	}
	if s.Metadata == nil && len(s.Sources) == 0 {
		// "v1\n" would read back as a file without its metadata line
		return nil, corruptf("an offsets entry needs metadata or a source")
	}
	var b bytes.Buffer
	b.WriteString("v" + strconv.Itoa(v) + "\n")
	if s.Metadata != nil {
		md, err := s.Metadata.encode()
		if err != nil {
			return nil, err
		}
		b.Write(md)
	} else if v >= 2 {
		return nil, corruptf("offset log v2 needs metadata")
	}
	for i, e := range s.Sources {
		b.WriteByte('\n')
		if v >= 2 {
			id := e.ID
			if id == "" {
				id = strconv.Itoa(i)
			}
			if strings.Contains(id, ":") {
				return nil, corruptf("source id %q contains ':'", id)
			}
			b.WriteString(id + ":")
		}
		if !e.Present {
			b.WriteByte('-')
			continue
		}
		if e.JSON == "" || strings.ContainsAny(e.JSON, "\n\r") || e.JSON == "-" {
			return nil, corruptf("offset of source %d is not a one-line JSON value", i)
		}
		b.WriteString(e.JSON)
	}
	return b.Bytes(), nil
}

// encode writes the metadata in Spark's field order.
func (m OffsetSeqMetadata) encode() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"batchWatermarkMs":` + strconv.FormatInt(m.BatchWatermarkMs, 10))
	b.WriteString(`,"batchTimestampMs":` + strconv.FormatInt(m.BatchTimestampMs, 10))
	if m.Conf != nil {
		b.WriteString(`,"conf":{`)
		for i, k := range slices.Sorted(maps.Keys(m.Conf)) {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			vb, _ := json.Marshal(m.Conf[k])
			b.Write(kb)
			b.WriteByte(':')
			b.Write(vb)
		}
		b.WriteByte('}')
	}
	for _, raw := range []struct {
		name string
		v    json.RawMessage
	}{{"sourceMetadataInfo", m.SourceMetadataInfo}, {"controlBatchInfo", m.ControlBatchInfo}} {
		if len(raw.v) == 0 {
			continue
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw.v); err != nil {
			return nil, corruptf("offset metadata %s: %v", raw.name, err)
		}
		b.WriteString(`,"` + raw.name + `":`)
		b.Write(c.Bytes())
	}
	if m.Epoch != 0 {
		b.WriteString(`,"ckgateEpoch":` + strconv.FormatUint(m.Epoch, 10))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

package checkpoint

import (
	"encoding/binary"
	"encoding/json"
	"errors"
)

// State schema files (SchemaHelper), binary DataOutputStream, uncompressed:
//
//	v1: writeUTF("v1") writeUTF(keySchema) writeUTF(valueSchema)
//	    at state/<op>/0/[<store>/]_metadata/schema
//	v2: writeUTF("v2") then key and value as int32 numChunks + numChunks × writeUTF(chunk)
//	v3: writeUTF("v3") int32 numColumnFamilies, then per family writeUTF(name),
//	    [int16 keySchemaId] chunked key schema, [int16 valueSchemaId] chunked value
//	    schema, chunked key state encoder spec, chunked user key encoder schema
//	    at state/<op>/_stateSchema/<store>/<batchId>_<uuid>
//
// The bracketed schema ids appeared after the Spark 4.0.0-labelled golden
// files (SPARK-50714); both layouts are read.

// StateSchemaMaxVersion is the highest state schema version understood.
const StateSchemaMaxVersion = 3

// maxUTFChunk is the largest chunk Spark writes (writeUTF's limit).
const maxUTFChunk = 65535

// StateSchema is a decoded state schema file.
type StateSchema struct {
	Version        int
	ColumnFamilies []ColumnFamilySchema
}

// ColumnFamilySchema is the schema of one column family (v3) or of the
// whole store (v1, v2: one family named "default").
type ColumnFamilySchema struct {
	Name                 string `json:"name"`
	KeySchemaID          *int16 `json:"key_schema_id,omitempty"`
	ValueSchemaID        *int16 `json:"value_schema_id,omitempty"`
	KeySchema            string `json:"key_schema"`   // Spark StructType JSON
	ValueSchema          string `json:"value_schema"` // Spark StructType JSON
	KeyStateEncoderSpec  string `json:"key_state_encoder_spec,omitempty"`
	UserKeyEncoderSchema string `json:"user_key_encoder_schema,omitempty"`
}

// DecodeStateSchema decodes a state schema file of any version.
func DecodeStateSchema(data []byte) (*StateSchema, error) {
	if len(data) == 0 {
		return nil, truncatedf("empty state schema file")
	}
	vs, off, err := readUTF(data, 0)
	if err != nil {
		return nil, err
	}
	v, err := parseVersionLine(vs, StateSchemaMaxVersion, "state schema")
	if err != nil {
		return nil, err
	}
	s := &StateSchema{Version: v}
	switch v {
	case 1:
		cf := ColumnFamilySchema{Name: "default"}
		if cf.KeySchema, off, err = readUTF(data, off); err != nil {
			return nil, err
		}
		if cf.ValueSchema, off, err = readUTF(data, off); err != nil {
			return nil, err
		}
		s.ColumnFamilies = []ColumnFamilySchema{cf}
	case 2:
		cf := ColumnFamilySchema{Name: "default"}
		if cf.KeySchema, off, err = readChunked(data, off); err != nil {
			return nil, err
		}
		if cf.ValueSchema, off, err = readChunked(data, off); err != nil {
			return nil, err
		}
		s.ColumnFamilies = []ColumnFamilySchema{cf}
	case 3:
		cfs, next, err := readV3Families(data, off, false)
		if err != nil {
			cfs2, next2, err2 := readV3Families(data, off, true)
			if err2 != nil {
				return nil, err
			}
			cfs, next = cfs2, next2
		}
		s.ColumnFamilies, off = cfs, next
	}
	if off != len(data) {
		return nil, corruptf("state schema v%d: %d bytes after the schema", v, len(data)-off)
	}
	for _, cf := range s.ColumnFamilies {
		if !json.Valid([]byte(cf.KeySchema)) || !json.Valid([]byte(cf.ValueSchema)) {
			return nil, corruptf("state schema v%d: column family %q has a schema that is not JSON", v, cf.Name)
		}
	}
	return s, nil
}

func readChunked(b []byte, off int) (string, int, error) {
	if len(b)-off < 4 {
		return "", off, truncatedf("chunk count at byte %d cut", off)
	}
	n := int32(binary.BigEndian.Uint32(b[off:]))
	off += 4
	if n < 0 || int64(n)*2 > int64(len(b)-off) {
		if n > 0 {
			return "", off, truncatedf("%d chunks announced at byte %d, %d bytes left", n, off-4, len(b)-off)
		}
		return "", off, corruptf("chunk count %d at byte %d", n, off-4)
	}
	var out []byte
	for range n {
		s, next, err := readUTF(b, off)
		if err != nil {
			return "", off, err
		}
		out = append(out, s...)
		off = next
	}
	return string(out), off, nil
}

func readV3Families(b []byte, off int, withIDs bool) ([]ColumnFamilySchema, int, error) {
	if len(b)-off < 4 {
		return nil, off, truncatedf("column family count cut")
	}
	n := int32(binary.BigEndian.Uint32(b[off:]))
	off += 4
	if n < 0 || int64(n)*8 > int64(len(b)-off) {
		return nil, off, corruptf("state schema v3: %d column families", n)
	}
	readID := func() (*int16, error) {
		if !withIDs {
			return nil, nil
		}
		if len(b)-off < 2 {
			return nil, truncatedf("schema id at byte %d cut", off)
		}
		id := int16(binary.BigEndian.Uint16(b[off:]))
		off += 2
		return &id, nil
	}
	var out []ColumnFamilySchema
	for range n {
		var cf ColumnFamilySchema
		var err error
		if cf.Name, off, err = readUTF(b, off); err != nil {
			return nil, off, err
		}
		if cf.KeySchemaID, err = readID(); err != nil {
			return nil, off, err
		}
		if cf.KeySchema, off, err = readChunked(b, off); err != nil {
			return nil, off, err
		}
		if cf.ValueSchemaID, err = readID(); err != nil {
			return nil, off, err
		}
		if cf.ValueSchema, off, err = readChunked(b, off); err != nil {
			return nil, off, err
		}
		if cf.KeyStateEncoderSpec, off, err = readChunked(b, off); err != nil {
			return nil, off, err
		}
		if cf.UserKeyEncoderSchema, off, err = readChunked(b, off); err != nil {
			return nil, off, err
		}
		if !json.Valid([]byte(cf.KeySchema)) || !json.Valid([]byte(cf.ValueSchema)) {
			return nil, off, corruptf("state schema v3: column family %q has a schema that is not JSON", cf.Name)
		}
		out = append(out, cf)
	}
	if off != len(b) {
		return nil, off, corruptf("state schema v3: %d bytes after the last column family", len(b)-off)
	}
	return out, off, nil
}

// Encode writes the schema file in its Version (v2 when 0). v3 is written
// with schema ids when every family has both ids, else without.
func (s StateSchema) Encode() ([]byte, error) {
	v, err := encodeVersion(s.Version, 2, StateSchemaMaxVersion, "state schema")
	if err != nil {
		return nil, err
	}
	b, _ := appendUTF(nil, "v"+string(rune('0'+v)))
	appendChunked := func(str string) {
		if err != nil {
			return
		}
		chunks := chunkString(str, maxUTFChunk)
		b = binary.BigEndian.AppendUint32(b, uint32(len(chunks)))
		for _, c := range chunks {
			b, err = appendUTF(b, c)
		}
	}
	switch v {
	case 1, 2:
		if len(s.ColumnFamilies) != 1 {
			return nil, errors.New("state schema v1/v2 holds exactly one column family")
		}
		cf := s.ColumnFamilies[0]
		if v == 1 {
			if b, err = appendUTF(b, cf.KeySchema); err == nil {
				b, err = appendUTF(b, cf.ValueSchema)
			}
		} else {
			appendChunked(cf.KeySchema)
			appendChunked(cf.ValueSchema)
		}
	case 3:
		withIDs := len(s.ColumnFamilies) > 0
		for _, cf := range s.ColumnFamilies {
			withIDs = withIDs && cf.KeySchemaID != nil && cf.ValueSchemaID != nil
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(s.ColumnFamilies)))
		for _, cf := range s.ColumnFamilies {
			if b, err = appendUTF(b, cf.Name); err != nil {
				break
			}
			if withIDs {
				b = binary.BigEndian.AppendUint16(b, uint16(*cf.KeySchemaID))
			}
			appendChunked(cf.KeySchema)
			if withIDs {
				b = binary.BigEndian.AppendUint16(b, uint16(*cf.ValueSchemaID))
			}
			appendChunked(cf.ValueSchema)
			appendChunked(cf.KeyStateEncoderSpec)
			appendChunked(cf.UserKeyEncoderSchema)
		}
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

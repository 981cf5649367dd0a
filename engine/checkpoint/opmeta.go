package checkpoint

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Operator metadata (OperatorStateMetadata, Spark 4.0): v1 at
// state/<op>/_metadata/metadata, v2 at state/<op>/_metadata/v2/<batchId>.
//
//	v1 \n {"operatorInfo":{"operatorId":0,"operatorName":"stateStoreSave"},
//	       "stateStoreInfo":[{"storeName":"default","numColsPrefixKey":0,"numPartitions":5}]}

// OperatorMetadataMaxVersion is the highest operator metadata version
// understood.
const OperatorMetadataMaxVersion = 2

// OperatorMetadata is a decoded operator metadata file.
type OperatorMetadata struct {
	Version      int
	OperatorID   int64
	OperatorName string
	Stores       []StoreMetadata
	// PropertiesJSON is v2's operatorPropertiesJson (a JSON string).
	PropertiesJSON string
}

// StoreMetadata describes one state store of an operator.
type StoreMetadata struct {
	Name             string   `json:"storeName"`
	NumColsPrefixKey int      `json:"numColsPrefixKey"`
	NumPartitions    int      `json:"numPartitions"`
	SchemaFilePaths  []string `json:"stateSchemaFilePaths,omitempty"`
}

type opMetaJSON struct {
	OperatorInfo struct {
		OperatorID   *int64 `json:"operatorId"`
		OperatorName string `json:"operatorName"`
	} `json:"operatorInfo"`
	StateStoreInfo []struct {
		StoreName           string   `json:"storeName"`
		NumColsPrefixKey    int      `json:"numColsPrefixKey"`
		NumPartitions       int      `json:"numPartitions"`
		StateSchemaFilePath *string  `json:"stateSchemaFilePath"`
		StateSchemaPaths    []string `json:"stateSchemaFilePaths"`
	} `json:"stateStoreInfo"`
	OperatorPropertiesJSON string `json:"operatorPropertiesJson"`
}

// DecodeOperatorMetadata decodes a v1 or v2 operator metadata file.
func DecodeOperatorMetadata(data []byte) (*OperatorMetadata, error) {
	lines, v, err := versionedLines(data, OperatorMetadataMaxVersion, "operator metadata", "empty operator metadata")
	if err != nil {
		return nil, err
	}
	if len(lines) < 2 {
		return nil, truncatedf("operator metadata without JSON")
	}
	var j opMetaJSON
	if err := json.Unmarshal([]byte(lines[1]), &j); err != nil {
		return nil, jsonErr("operator metadata", err)
	}
	if j.OperatorInfo.OperatorID == nil {
		return nil, corruptf("operator metadata without operatorInfo.operatorId")
	}
	m := &OperatorMetadata{
		Version:        v,
		OperatorID:     *j.OperatorInfo.OperatorID,
		OperatorName:   j.OperatorInfo.OperatorName,
		PropertiesJSON: j.OperatorPropertiesJSON,
	}
	for _, s := range j.StateStoreInfo {
		sm := StoreMetadata{Name: s.StoreName, NumColsPrefixKey: s.NumColsPrefixKey, NumPartitions: s.NumPartitions, SchemaFilePaths: s.StateSchemaPaths}
		if s.StateSchemaFilePath != nil {
			sm.SchemaFilePaths = append(sm.SchemaFilePaths, *s.StateSchemaFilePath)
		}
		if sm.NumPartitions < 0 {
			return nil, corruptf("operator metadata: store %q has %d partitions", sm.Name, sm.NumPartitions)
		}
		m.Stores = append(m.Stores, sm)
	}
	return m, nil
}

// Encode returns the operator metadata file (v1 unless Version is 2), no
// trailing newline.
func (m OperatorMetadata) Encode() ([]byte, error) {
	v, err := encodeVersion(m.Version, 1, OperatorMetadataMaxVersion, "operator metadata")
	if err != nil {
		return nil, err
	}
	type storeV1 struct {
		Name             string `json:"storeName"`
		NumColsPrefixKey int    `json:"numColsPrefixKey"`
		NumPartitions    int    `json:"numPartitions"`
	}
	type info struct {
		OperatorID   int64  `json:"operatorId"`
		OperatorName string `json:"operatorName"`
	}
	var body any
	if v == 1 {
		stores := make([]storeV1, 0, len(m.Stores))
		for _, s := range m.Stores {
			stores = append(stores, storeV1{s.Name, s.NumColsPrefixKey, s.NumPartitions})
		}
		body = struct {
			OperatorInfo   info      `json:"operatorInfo"`
			StateStoreInfo []storeV1 `json:"stateStoreInfo"`
		}{info{m.OperatorID, m.OperatorName}, stores}
	} else {
		stores := make([]StoreMetadata, len(m.Stores))
		copy(stores, m.Stores)
		for i := range stores {
			if stores[i].SchemaFilePaths == nil {
				stores[i].SchemaFilePaths = []string{}
			}
		}
		body = struct {
			OperatorInfo   info            `json:"operatorInfo"`
			StateStoreInfo []StoreMetadata `json:"stateStoreInfo"`
			Properties     string          `json:"operatorPropertiesJson"`
		}{info{m.OperatorID, m.OperatorName}, stores, m.PropertiesJSON}
	}
	j, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("v" + strconv.Itoa(v) + "\n")
	b.Write(j)
	return b.Bytes(), nil
}

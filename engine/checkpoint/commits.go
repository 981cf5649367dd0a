package checkpoint

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// CommitLogMaxVersion is the highest commit log version understood: v1
// and v2 (checkpoint format v2, with state unique ids).
const CommitLogMaxVersion = 2

// CommitMetadata is one commits/<N> file:
//
//	"v1" | "v2" \n {"nextBatchWatermarkMs":…,"stateUniqueIds":{…}}
//
// Spark 2.3 wrote "v1\n{}", and a missing second line reads as {}.
type CommitMetadata struct {
	Version int
	// NextBatchWatermarkMs is the watermark the next batch uses.
	NextBatchWatermarkMs int64
	// NoWatermark is true when the file has no nextBatchWatermarkMs (Spark
	// before 2.4): Spark then reads 0 and takes the watermark from the
	// offset log.
	NoWatermark bool
	// StateUniqueIDs maps operator id → [partition][store index] → the
	// unique id of the state version this batch committed (N+1). nil when
	// absent; an empty non-nil map when written as {}.
	StateUniqueIDs map[int64][][]string
	// Epoch is the ckgate writer epoch that wrote the entry (0: none).
	Epoch uint64
	// Progress is what ckgate's engine recorded about the batch (nil for
	// Spark's commits).
	Progress *BatchProgress
}

type commitJSON struct {
	NextBatchWatermarkMs *int64                `json:"nextBatchWatermarkMs"`
	StateUniqueIDs       map[string][][]string `json:"stateUniqueIds"`
	Epoch                uint64                `json:"ckgateEpoch"`
	Progress             json.RawMessage       `json:"ckgateProgress"`
}

// DecodeCommit decodes a commits/<N> file.
func DecodeCommit(data []byte) (*CommitMetadata, error) {
	lines, v, err := versionedLines(data, CommitLogMaxVersion, "commit log", "incomplete log file in the offset commit log (empty)")
	if err != nil {
		return nil, err
	}
	c := &CommitMetadata{Version: v}
	// Spark reads the second line only; a missing one is {}
	body := "{}"
	if len(lines) > 1 {
		body = strings.TrimSpace(lines[1])
	}
	var j commitJSON
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		return nil, jsonErr("commit metadata", err)
	}
	if j.NextBatchWatermarkMs == nil {
		c.NoWatermark = true
	} else {
		c.NextBatchWatermarkMs = *j.NextBatchWatermarkMs
	}
	c.Epoch, c.Progress = j.Epoch, decodeProgress(j.Progress)
	if j.StateUniqueIDs != nil {
		c.StateUniqueIDs = make(map[int64][][]string, len(j.StateUniqueIDs))
		for k, ids := range j.StateUniqueIDs {
			op, err := strconv.ParseInt(k, 10, 64)
			if err != nil {
				return nil, corruptf("commit metadata: stateUniqueIds key %q is not an operator id", k)
			}
			c.StateUniqueIDs[op] = ids
		}
	}
	return c, nil
}

// Encode returns the commit file as Spark writes it (no trailing newline).
func (c CommitMetadata) Encode() ([]byte, error) {
	v, err := encodeVersion(c.Version, 1, CommitLogMaxVersion, "commit log")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("v" + strconv.Itoa(v) + "\n{")
	sep := ""
	if !c.NoWatermark {
		b.WriteString(`"nextBatchWatermarkMs":` + strconv.FormatInt(c.NextBatchWatermarkMs, 10))
		sep = ","
	}
	if c.StateUniqueIDs != nil {
		b.WriteString(sep + `"stateUniqueIds":{`)
		for i, op := range slices.Sorted(maps.Keys(c.StateUniqueIDs)) {
			if i > 0 {
				b.WriteByte(',')
			}
			ids := make([][]string, len(c.StateUniqueIDs[op]))
			for i, part := range c.StateUniqueIDs[op] {
				ids[i] = append([]string{}, part...)
			}
			jb, _ := json.Marshal(ids)
			b.WriteString(`"` + strconv.FormatInt(op, 10) + `":`)
			b.Write(jb)
		}
		b.WriteByte('}')
		sep = ","
	}
	if c.Epoch != 0 {
		b.WriteString(sep + `"ckgateEpoch":` + strconv.FormatUint(c.Epoch, 10))
		sep = ","
	}
	if c.Progress != nil {
		jb, err := json.Marshal(c.Progress)
		if err != nil {
			return nil, err
		}
		b.WriteString(sep + `"ckgateProgress":`)
		b.Write(jb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

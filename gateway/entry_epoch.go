package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
)

// EpochField is the JSON field a log entry line carries its writer epoch in
// (ckgate's engine puts it in the metadata line of offsets/N and in
// commits/N; Spark ignores unknown fields there).
const EpochField = "ckgateEpoch"

// EntryEpoch returns the writer epoch recorded in a log entry: the first
// JSON object line with an EpochField. An entry without one (written by
// Spark, or by an older ckgate) has epoch 0, older than any session.
func EntryEpoch(key string, data []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' || !bytes.Contains(line, []byte(EpochField)) {
			continue
		}
		var v map[string]json.RawMessage
		if err := json.Unmarshal(line, &v); err != nil {
			continue
		}
		raw, ok := v[EpochField]
		if !ok {
			continue
		}
		var e uint64
		if err := json.Unmarshal(raw, &e); err != nil {
			return 0, fmt.Errorf("%s: %s is not an unsigned integer: %w", key, EpochField, err)
		}
		return e, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	return 0, nil
}

package delta

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/ckgate/ckgate/gateway"
)

// MaxCommitLineBytes bounds one line (one action) of a commit file: 16 MiB
// (an add with large stats, or a metaData with a wide schema).
const MaxCommitLineBytes = 16 << 20

// ParseAction parses one line of a commit file; key and line (1-based)
// name it in errors. A line that is not a JSON object, or an action
// without its required fields, is ErrCorrupt. An object with none of the
// known actions is returned empty (readers ignore unknown actions).
func ParseAction(key string, line int, b []byte) (Action, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return Action{}, corruptf(key, "line %d is not a JSON object", line)
	}
	var a Action
	if err := json.Unmarshal(b, &a); err != nil {
		return Action{}, corruptf(key, "line %d: %v", line, err)
	}
	if err := a.validate(); err != nil {
		return Action{}, corruptf(key, "line %d: %v", line, err)
	}
	return a, nil
}

func (a Action) validate() error {
	switch {
	case a.Add != nil && a.Add.Path == "":
		return fmt.Errorf("add without a path")
	case a.Remove != nil && a.Remove.Path == "":
		return fmt.Errorf("remove without a path")
	case a.Txn != nil && a.Txn.AppID == "":
		return fmt.Errorf("txn without an appId")
	case a.MetaData != nil && a.MetaData.ID == "":
		return fmt.Errorf("metaData without an id")
	case a.Protocol != nil && (a.Protocol.MinReaderVersion < 1 || a.Protocol.MinWriterVersion < 1):
		return fmt.Errorf("protocol with reader version %d, writer version %d", a.Protocol.MinReaderVersion, a.Protocol.MinWriterVersion)
	case a.Sidecar != nil && a.Sidecar.Path == "":
		return fmt.Errorf("sidecar without a path")
	}
	return nil
}

// ParseCommit parses the bytes of a commit file (newline-delimited JSON
// actions); key names it in errors. Blank lines are skipped.
func ParseCommit(key string, data []byte) ([]Action, error) {
	return parseActions(key, func(yield func([]byte, error) bool) {
		for l := range bytes.Lines(data) {
			if !yield(bytes.TrimSuffix(l, []byte("\n")), nil) {
				return
			}
		}
	})
}

// ReadCommit reads and parses the commit of version v of the table in s,
// streaming it line by line (each line at most MaxCommitLineBytes). A
// missing commit is gateway.ErrNotFound naming its key.
func ReadCommit(ctx context.Context, s gateway.Store, v int64) ([]Action, error) {
	return readActions(ctx, s, CommitKey(v))
}

// readActions streams the newline-delimited JSON actions of key (a commit
// or a JSON checkpoint), each line at most MaxCommitLineBytes.
func readActions(ctx context.Context, s gateway.Store, key string) ([]Action, error) {
	return parseActions(key, gateway.Lines(ctx, s, key, MaxCommitLineBytes))
}

// parseActions parses one action a line, numbering the lines from 1 in
// errors and skipping blank ones; a read error ends it.
func parseActions(key string, lines iter.Seq2[[]byte, error]) ([]Action, error) {
	var out []Action
	line := 0
	for l, err := range lines {
		if err != nil {
			return nil, err
		}
		line++
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		a, err := ParseAction(key, line, l)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// MarshalCommit returns the bytes of a commit file holding actions, one
// JSON object a line.
func MarshalCommit(actions []Action) ([]byte, error) {
	var buf bytes.Buffer
	for i, a := range actions {
		if err := a.validate(); err != nil {
			return nil, fmt.Errorf("action %d: %w", i, err)
		}
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("action %d: %w", i, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

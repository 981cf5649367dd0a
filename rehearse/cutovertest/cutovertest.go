// Package cutovertest writes the generated clickstreams and specs that the
// tests of `ckgate rehearse --candidate` run on: deterministic rows whose
// late and session outcomes a test can compute on its own.
package cutovertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
)

// T0 is the first event time of every stream, in epoch milliseconds
// (2026-01-01T00:00:00Z).
const T0 = int64(1767225600000)

// Min is a minute in milliseconds.
const Min = int64(60_000)

// Event is one click.
type Event struct {
	User   string `json:"user_id"`
	Ts     int64  `json:"ts"`
	Page   string `json:"page"`
	Amount int    `json:"amount"`
}

// Write writes one JSON-lines file per batch into dir (part-000.jsonl, …).
func Write(dir string, batches [][]Event) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, b := range batches {
		var sb strings.Builder
		for _, e := range b {
			line, err := json.Marshal(e)
			if err != nil {
				return err
			}
			sb.Write(line)
			sb.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%03d.jsonl", i)), []byte(sb.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Users returns n events of users prefix01.., one each, at ts + i seconds.
func Users(prefix string, n int, ts int64) []Event {
	out := make([]Event, n)
	for i := range out {
		out[i] = Event{User: fmt.Sprintf("%s%02d", prefix, i+1), Ts: ts + int64(i)*1000, Page: "p" + fmt.Sprint(i%3), Amount: i + 1}
	}
	return out
}

// Spec is a sessionization query over input writing to sink: one file per
// batch, session windows by keys.
type Spec struct {
	Name, Input, Sink string
	Watermark, Gap    string
	Keys              []string
}

// YAML renders the spec.
func (s Spec) YAML() string {
	keys := s.Keys
	if len(keys) == 0 {
		keys = []string{"user_id"}
	}
	return fmt.Sprintf(`name: %s
source: {kind: files, path: %s, format: jsonl, max_files_per_batch: 1}
event_time: ts
watermark: %s
operator: {kind: session_window, keys: [%s], gap: %s, aggregates: [count, {sum: amount}]}
output_mode: append
sink: {kind: files, path: %s, format: jsonl}
partitions: 4
`, s.Name, filepath.ToSlash(s.Input), s.Watermark, strings.Join(keys, ", "), s.Gap, filepath.ToSlash(s.Sink))
}

// WriteSpec writes the spec's YAML to path.
func (s Spec) WriteSpec(path string) error {
	return os.WriteFile(path, []byte(s.YAML()), 0o644)
}

// RunProduction runs the spec at specPath to the end of its input on the
// checkpoint directory cpDir, as `ckgate run` does: the production
// checkpoint and sink the rehearsal must leave alone.
func RunProduction(ctx context.Context, specPath, cpDir string) error {
	s, err := spec.Load(specPath)
	if err != nil {
		return err
	}
	return RunSpec(ctx, s, cpDir, filepath.Dir(specPath))
}

// RunSpec is RunProduction for a loaded spec whose relative paths resolve
// against baseDir.
func RunSpec(ctx context.Context, s *spec.Spec, cpDir, baseDir string) error {
	if err := os.MkdirAll(cpDir, 0o755); err != nil {
		return err
	}
	cp, err := filestore.New(cpDir)
	if err != nil {
		return err
	}
	defer gateway.Close(cp)
	q, err := engine.Open(ctx, s, engine.Options{Checkpoint: cp, CheckpointURL: cpDir,
		Registry: gateway.NewRegistry().Register("file", filestore.Open), BaseDir: baseDir,
		Session: gateway.SessionOptions{Principal: "prod", Heartbeat: -1, Now: time.Now}})
	if err != nil {
		return err
	}
	err = q.Run(ctx, engine.Trigger{AvailableNow: true}, nil)
	if cerr := q.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/source"
	"github.com/ckgate/ckgate/gateway"
)

// FilesFrom is the boundary of a files source's fresh start, as
// --from-offsets gives it: exactly one of
//
//	{"logOffset":N}   the files the old checkpoint's file source log
//	                  (sources/0/) recorded up to log offset N are processed
//	{"batch":N}       the same, up to the log offset batch N of the old
//	                  checkpoint ended at (its offsets/N)
//	{"files":[...]}   these files are processed (full paths as the source
//	                  log records them, or names relative to the input)
type FilesFrom struct {
	LogOffset *int64
	Batch     *int64
	Files     []string
}

// ErrBadBoundary: a fresh-start boundary that cannot be used.
var ErrBadBoundary = errors.New("bad fresh-start boundary")

// maxBoundaryFiles caps {"files":[...]}.
const maxBoundaryFiles = 1 << 20

// ParseFilesBoundary parses a files boundary (FilesFrom). Anything else,
// unknown fields included, is ErrBadBoundary.
func ParseFilesBoundary(raw string) (FilesFrom, error) {
	bad := func(format string, a ...any) (FilesFrom, error) {
		return FilesFrom{}, fmt.Errorf("%w: %q: %s", ErrBadBoundary, truncate(raw, 80), fmt.Sprintf(format, a...))
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return bad(`want {"logOffset":N}, {"batch":N} or {"files":["…"]}`)
	}
	if dec.More() {
		return bad("trailing data")
	}
	if len(m) != 1 {
		return bad(`want exactly one of "logOffset", "batch", "files"`)
	}
	var f FilesFrom
	for k, v := range m {
		switch k {
		case "logOffset", "batch":
			n, err := nonNegative(v)
			if err != nil {
				return bad("%s: %v", k, err)
			}
			if k == "batch" {
				f.Batch = &n
			} else {
				f.LogOffset = &n
			}
		case "files":
			var files []string
			if err := json.Unmarshal(v, &files); err != nil {
				return bad("files: want a list of file names")
			}
			if len(files) == 0 || len(files) > maxBoundaryFiles {
				return bad("files: want 1 to %d names, got %d", maxBoundaryFiles, len(files))
			}
			for _, name := range files {
				if strings.TrimSpace(name) == "" || strings.ContainsRune(name, 0) {
					return bad("files: an empty or invalid name")
				}
			}
			f.Files = files
		default:
			return bad("unknown field %q", k)
		}
	}
	return f, nil
}

func nonNegative(v json.RawMessage) (int64, error) {
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if err := d.Decode(&n); err != nil {
		return 0, errors.New("want a whole number")
	}
	i, err := n.Int64()
	if err != nil || i < 0 {
		return 0, fmt.Errorf("want a whole number at or above 0, got %s", n)
	}
	return i, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// sourceDir is the file source's log directory in a ckgate or Spark
// checkpoint with one source.
const sourceDir = checkpoint.SourcesDir + "/0"

// PlannedSource returns the source kind and the source's identity fields
// (path for files, topic for Kafka) recorded in the checkpoint's
// _ckgate/plan.json, or an empty kind when it has none (a Spark
// checkpoint).
func PlannedSource(ctx context.Context, st gateway.Store) (kind string, fields map[string]string, err error) {
	p, err := checkpoint.ReadPlan(ctx, st)
	if errors.Is(err, gateway.ErrNotFound) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	return p.Source["kind"], p.Source, nil
}

// FilesBoundary makes the start point of a new root for the files source
// of the checkpoint at src: from a time (files modified at or after
// modifiedFrom are new input), or from FilesFrom (the files already
// processed). The input path comes from src's plan (empty for a Spark
// checkpoint: not checked by the source).
func FilesBoundary(ctx context.Context, src gateway.Store, from FilesFrom, modifiedFrom *time.Time) (*source.FilesStart, error) {
	kind, fields, err := PlannedSource(ctx, src)
	if err != nil {
		return nil, err
	}
	if kind != "" && kind != "files" {
		return nil, fmt.Errorf("%w: the checkpoint reads a %s source, not files", ErrBadBoundary, kind)
	}
	fs := &source.FilesStart{Path: strings.TrimSuffix(fields["path"], "/")}
	if modifiedFrom != nil {
		t := modifiedFrom.UTC()
		fs.ModifiedFrom = &t
		return fs, nil
	}
	if len(from.Files) > 0 {
		for _, name := range from.Files {
			if !strings.Contains(name, "://") && !strings.HasPrefix(name, "/") && fs.Path != "" {
				name = fs.Path + "/" + strings.TrimPrefix(name, "./")
			}
			fs.Processed = append(fs.Processed, name)
		}
		return fs, nil
	}
	logOffset := from.LogOffset
	if from.Batch != nil {
		n, err := batchLogOffset(ctx, src, *from.Batch)
		if err != nil {
			return nil, err
		}
		logOffset = &n
	}
	if logOffset == nil {
		return nil, fmt.Errorf("%w: no boundary", ErrBadBoundary)
	}
	entries, latest, err := checkpoint.ReadFileSourceLog(ctx, src, sourceDir)
	if err != nil {
		return nil, fmt.Errorf("file source log %s: %w", sourceDir, err)
	}
	if *logOffset > latest {
		return nil, fmt.Errorf("%w: log offset %d is beyond the file source log's latest entry %d (%s)", ErrBadBoundary, *logOffset, latest, sourceDir)
	}
	for _, e := range entries {
		if e.BatchID <= *logOffset {
			fs.Processed = append(fs.Processed, e.Path)
		}
	}
	fs.FromLogOffset = logOffset
	return fs, nil
}

// batchLogOffset returns the file source log offset batch n of the
// checkpoint at src ended at (its offsets/n, source 0).
func batchLogOffset(ctx context.Context, src gateway.Store, n int64) (int64, error) {
	key := checkpoint.OffsetsKey(n)
	data, _, err := gateway.GetBounded(ctx, src, key, 0)
	if errors.Is(err, gateway.ErrNotFound) {
		return 0, fmt.Errorf("%w: batch %d: %s not found", ErrBadBoundary, n, key)
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", key, err)
	}
	seq, err := checkpoint.DecodeOffsetSeq(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	if len(seq.Sources) == 0 || !seq.Sources[0].Present {
		return 0, fmt.Errorf("%w: %s has no offset of source 0", ErrBadBoundary, key)
	}
	lo, err := checkpoint.DecodeFileSourceOffset(seq.Sources[0].JSON)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	return lo, nil
}

// checkStart checks a fresh start's boundary: one kind, usable.
func checkStart(sp source.StartPoint) error {
	switch {
	case len(sp.Kafka) > 0 && sp.Files != nil:
		return fmt.Errorf("%w: both Kafka offsets and a files boundary", ErrBadBoundary)
	case sp.Files != nil:
		if sp.Files.ModifiedFrom == nil && len(sp.Files.Processed) == 0 {
			return fmt.Errorf("%w: the files boundary names neither a time nor processed files", ErrBadBoundary)
		}
		return nil
	case len(sp.Kafka) == 0:
		return fmt.Errorf("a fresh start needs a boundary: the Kafka offsets the new root starts at, or the files it treats as processed")
	}
	for topic, parts := range sp.Kafka {
		if len(parts) == 0 {
			return fmt.Errorf("boundary: topic %s has no partitions", topic)
		}
		for p, o := range parts {
			if o < 0 {
				return fmt.Errorf("boundary: topic %s partition %d: offset %d", topic, p, o)
			}
		}
	}
	return nil
}

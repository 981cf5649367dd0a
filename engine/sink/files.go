package sink

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// files is the file sink: batch N's rows go to one data file
// part-<N>-<write id>.c000.<format> (jsonl, or parquet: see encodeParquet)
// (a fresh name per attempt, so no attempt
// overwrites another's file), then the manifest _spark_metadata/N names it,
// created only if absent. Every 10th manifest (N+1 divisible by 10) is
// N.compact and holds all entries so far, as Spark's FileStreamSinkLog does.
// N is the manifest id: the batch id plus the owner record's offset (0 but
// for a query that took the sink over).
type files struct {
	out    gateway.Store
	url    string
	format string
	latest int64 // latest manifest id, -1 for none
	all    []checkpoint.SinkFileStatus
	loaded bool
	own    ownership
	env    Env
	// times are the columns written as TIMESTAMP (nil: format 1, the
	// old shape, every column typed by its values)
	times map[string]bool
}

func newFiles(ctx context.Context, s *spec.Spec, env Env) (*files, error) {
	out, u, err := env.Open(ctx, s.Sink.Path)
	if err != nil {
		return nil, fmt.Errorf("sink.path %s: %w", s.Sink.Path, err)
	}
	f := &files{out: out, url: strings.TrimSuffix(u, "/"), format: s.Sink.Format, latest: -1, env: env, times: TimeColumns(s)}
	if err := f.claimOwnership(ctx); err != nil {
		gateway.Close(out)
		return nil, err
	}
	return f, nil
}

func (f *files) Identity() map[string]string {
	return map[string]string{"kind": spec.SinkFiles, "path": f.url, "format": f.format}
}

func (f *files) Close() error { return gateway.Close(f.out) }

func (f *files) useFormat(version string) error {
	if err := checkFormat(version); err != nil {
		return fmt.Errorf("file sink %s: %w", f.url, err)
	}
	if version == FormatStringTimes {
		f.times = nil
	}
	return nil
}

// load reads the manifest log once.
func (f *files) load(ctx context.Context) error {
	if f.loaded {
		return nil
	}
	es, latest, err := checkpoint.ReadFileSinkLog(ctx, f.out, checkpoint.SinkMetadataDir)
	if err != nil && !errors.Is(err, gateway.ErrNotFound) && !errors.Is(err, checkpoint.ErrNotCheckpoint) {
		return fmt.Errorf("file sink %s: %w", f.url, err)
	}
	if err == nil {
		f.all, f.latest = es, latest
	}
	f.loaded = true
	return nil
}

func writeID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// DataFileName is the name of batch's data file for one attempt.
func DataFileName(batch int64, id, format string) string {
	return fmt.Sprintf("part-%05d-%s.c000.%s", batch, id, format)
}

func (f *files) Commit(ctx context.Context, batch int64, rows []row.Row) (Result, error) {
	if err := f.load(ctx); err != nil {
		return Result{}, err
	}
	mid, err := f.manifestID(ctx, batch)
	if err != nil {
		return Result{}, err
	}
	if mid <= f.latest {
		return Result{Skipped: true}, nil
	}
	var res Result
	var added []checkpoint.SinkFileStatus
	if len(rows) > 0 {
		var b []byte
		if f.format == "parquet" {
			var err error
			if b, err = encodeParquet(rows, inferColumns(rows, f.times)); err != nil {
				return Result{}, fmt.Errorf("file sink %s: batch %d (manifest %d): %w", f.url, batch, mid, err)
			}
		} else {
			for i := range rows {
				b = row.AppendJSON(b, &rows[i])
				b = append(b, '\n')
			}
		}
		name := DataFileName(mid, writeID(), f.format)
		if _, err := f.out.Put(ctx, name, b, gateway.IfAbsent()); err != nil {
			return Result{}, fmt.Errorf("file sink %s: %w", f.url, err)
		}
		res = Result{Rows: int64(len(rows)), Bytes: int64(len(b)), Files: []string{name}}
		added = append(added, checkpoint.SinkFileStatus{Path: f.url + "/" + name, Size: int64(len(b)),
			ModificationTime: f.env.Now().UnixMilli(), BlockReplication: 1, BlockSize: 32 << 20, Action: checkpoint.SinkActionAdd})
	}
	name := strconv.FormatInt(mid, 10)
	entries := added
	if checkpoint.IsCompactionBatch(mid, checkpoint.DefaultCompactInterval) {
		name += ".compact"
		entries = append(append([]checkpoint.SinkFileStatus{}, f.all...), added...)
	}
	data, err := checkpoint.EncodeFileSinkLog(entries)
	if err != nil {
		return Result{}, fmt.Errorf("file sink %s: manifest %d: %w", f.url, mid, err)
	}
	key := checkpoint.SinkMetadataDir + "/" + name
	if _, err := f.out.Put(ctx, key, data, gateway.IfAbsent()); err != nil {
		if errors.Is(err, gateway.ErrExists) {
			// committed by an earlier attempt whose answer we lost, or a
			// zombie's re-run of this batch: either holds this batch's rows,
			// unless the sink changed hands since it opened
			if err := f.lostManifest(ctx, key); err != nil {
				return Result{}, err
			}
			f.loaded = false
			return Result{Skipped: true}, nil
		}
		return Result{}, fmt.Errorf("file sink %s: %w", f.url, err)
	}
	f.all = append(f.all, added...)
	f.latest = mid
	f.own.claimed = false
	return res, nil
}

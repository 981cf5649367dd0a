package source

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// files reads new files of a directory (a store), in name order, at most
// max_files_per_batch per batch. Each batch's files are recorded in the
// file source log sources/<i>/<log offset> (Spark's FileStreamSourceLog,
// compacted every 10 entries) before the batch's offsets name that log
// offset, so a re-run reads the same files. Keys whose name starts with
// "." or "_" are not input (temp files, _SUCCESS, _spark_metadata). On a
// root started fresh (StartKey with a FilesStart), the files its boundary
// treats as processed are never input (see files_start.go).
type files struct {
	env     Env
	in      gateway.Store
	url     string // canonical URL of the input directory
	max     int
	seen    map[string]bool
	batches map[int64][]checkpoint.FileEntry // log offset → files
	latest  int64                            // latest log offset, -1 for none
	start   *filesBoundary                   // a fresh start's boundary (StartKey), or nil
}

func newFiles(ctx context.Context, s *spec.Spec, env Env) (*files, error) {
	in, u, err := env.Open(ctx, s.Source.Path)
	if err != nil {
		return nil, fmt.Errorf("source.path %s: %w", s.Source.Path, err)
	}
	f := &files{env: env, in: in, url: strings.TrimSuffix(u, "/"), max: s.Source.MaxFilesPerBatch,
		seen: map[string]bool{}, batches: map[int64][]checkpoint.FileEntry{}, latest: -1}
	if err := f.load(ctx); err != nil {
		gateway.Close(in)
		return nil, err
	}
	if err := f.loadStart(ctx); err != nil {
		gateway.Close(in)
		return nil, err
	}
	return f, nil
}

// load reads the file source log, replacing what was read before.
func (f *files) load(ctx context.Context) error {
	entries, latest, err := checkpoint.ReadFileSourceLog(ctx, f.env.Checkpoint, f.env.Dir)
	if err != nil && !errors.Is(err, gateway.ErrNotFound) && !errors.Is(err, checkpoint.ErrNotCheckpoint) {
		return fmt.Errorf("file source log %s: %w", f.env.Dir, err)
	}
	if err != nil || len(entries) == 0 && latest < 0 {
		return nil
	}
	seen, batches := map[string]bool{}, map[int64][]checkpoint.FileEntry{}
	for _, e := range entries {
		seen[e.Path] = true
		batches[e.BatchID] = append(batches[e.BatchID], e)
	}
	f.seen, f.batches, f.latest = seen, batches, max(f.latest, latest)
	return nil
}

// entries returns the files of log offset n. An entry this source has not
// read may have been written since it read the log: by the attempt that a
// take-over fenced, which writes sources/<i>/N and then offsets/N until
// its next fenced step. The log is read again once before the entry counts
// as missing.
func (f *files) entries(ctx context.Context, n int64) ([]checkpoint.FileEntry, error) {
	if e, ok := f.batches[n]; ok {
		return e, nil
	}
	if err := f.load(ctx); err != nil {
		return nil, err
	}
	if e, ok := f.batches[n]; ok {
		return e, nil
	}
	return nil, fmt.Errorf("%s/%d: file source log entry missing for offset %d", f.env.Dir, n, n)
}

func (f *files) Identity() map[string]string {
	return map[string]string{"kind": spec.SourceFiles, "path": f.url, "format": "jsonl"}
}

func (f *files) Close() error { return gateway.Close(f.in) }

func parseLogOffset(s string) (int64, error) {
	if s == "" {
		return -1, nil
	}
	n, err := checkpoint.DecodeFileSourceOffset(s)
	if err != nil {
		return 0, fmt.Errorf("file source offset %q: %w", s, err)
	}
	return n, nil
}

func (f *files) Next(ctx context.Context, start string) (string, error) {
	from, err := parseLogOffset(start)
	if err != nil {
		return "", err
	}
	if f.latest > from {
		// a log entry written by an attempt that crashed before its offsets
		return checkpoint.EncodeFileSourceOffset(from + 1), nil
	}
	next := f.latest + 1
	picked, err := f.pick(ctx, next)
	if err != nil {
		return "", err
	}
	if len(picked) == 0 {
		return start, nil
	}
	if err := f.record(ctx, next, picked); err != nil {
		return "", err
	}
	return checkpoint.EncodeFileSourceOffset(next), nil
}

// pick lists the input and returns the files log offset n would read: the
// first ones in name order not read yet, at most max_files_per_batch.
func (f *files) pick(ctx context.Context, n int64) ([]checkpoint.FileEntry, error) {
	var picked []checkpoint.FileEntry
	for a, err := range f.in.List(ctx, "") {
		if err != nil {
			return nil, fmt.Errorf("source %s: listing: %w", f.url, err)
		}
		if hidden(a.Key) {
			continue
		}
		p := f.url + "/" + a.Key
		if f.seen[p] || f.start.processed(p, a.Modified) {
			continue
		}
		picked = append(picked, checkpoint.FileEntry{Path: p, Timestamp: a.Modified.UnixMilli(), BatchID: n})
		if len(picked) == f.max {
			break
		}
	}
	return picked, nil
}

// record writes log entry n (create-only); an entry left by an earlier
// attempt wins.
func (f *files) record(ctx context.Context, n int64, picked []checkpoint.FileEntry) error {
	name := strconv.FormatInt(n, 10)
	entries := picked
	if checkpoint.IsCompactionBatch(n, checkpoint.DefaultCompactInterval) {
		name += ".compact"
		entries = nil
		for i := int64(0); i < n; i++ {
			entries = append(entries, f.batches[i]...)
		}
		entries = append(entries, picked...)
	}
	data, err := checkpoint.EncodeFileSourceLog(entries)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", f.env.Dir, name, err)
	}
	e, err := f.env.CreateEntry(ctx, f.env.Dir+"/"+name, data)
	if err != nil {
		return fmt.Errorf("file source log: %w", err)
	}
	if !bytes.Equal(e.Data, data) {
		got, err := checkpoint.DecodeFileSourceLog(e.Data)
		if err != nil {
			return fmt.Errorf("%s/%s: %w", f.env.Dir, name, err)
		}
		picked = picked[:0]
		for _, g := range got {
			if g.BatchID == n {
				picked = append(picked, g)
			}
		}
	}
	f.batches[n] = picked
	for _, p := range picked {
		f.seen[p.Path] = true
	}
	f.latest = n
	return nil
}

func hidden(key string) bool {
	for _, seg := range strings.Split(key, "/") {
		if strings.HasPrefix(seg, ".") || strings.HasPrefix(seg, "_") {
			return true
		}
	}
	return false
}

func (f *files) Read(ctx context.Context, start, end string, emit func(*row.Row) error) error {
	from, err := parseLogOffset(start)
	if err != nil {
		return err
	}
	to, err := parseLogOffset(end)
	if err != nil {
		return err
	}
	for n := from + 1; n <= to; n++ { // to <= checkpoint.MaxBatchID: no overflow
		if err := ctx.Err(); err != nil {
			return err
		}
		entries, err := f.entries(ctx, n)
		if err != nil {
			return err
		}
		for _, e := range entries {
			key, ok := strings.CutPrefix(e.Path, f.url+"/")
			if !ok {
				return fmt.Errorf("%s: recorded input %s is not under the source path %s", f.env.Dir, e.Path, f.url)
			}
			if err := f.readFile(ctx, key, emit); err != nil {
				return err
			}
		}
	}
	return nil
}

// readFile emits the JSON objects of one jsonl file; blank lines are
// skipped, a line that is not an object is an error naming file and line.
func (f *files) readFile(ctx context.Context, key string, emit func(*row.Row) error) error {
	rc, _, err := f.in.GetStream(ctx, key)
	if errors.Is(err, gateway.ErrNotFound) {
		return fmt.Errorf("source %s: input %s/%s is gone: its batch reads exactly the files it logged (a re-run too): put it back, or start over with `ckgate fresh-start`: %w",
			f.url, f.url, key, err)
	}
	if err != nil {
		return fmt.Errorf("source %s: %w", f.url, err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		r, err := row.ParseJSON(b)
		if err != nil {
			return fmt.Errorf("%s/%s:%d: %w", f.url, key, line, err)
		}
		if err := emit(&r); err != nil {
			return fmt.Errorf("%s/%s:%d: %w", f.url, key, line, err)
		}
		if line&0xfff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s/%s: %w", f.url, key, err)
	}
	return nil
}

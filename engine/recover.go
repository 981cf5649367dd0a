package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/operator"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/engine/state"
	"github.com/ckgate/ckgate/gateway"
)

// CorruptError is a checkpoint file a restart needs that is missing,
// damaged or in a format this ckgate does not understand. Open returns it
// before it writes anything: ckgate never repairs or overwrites such a
// file. It matches ErrCorrupt with errors.Is (and the decoder's error, e.g.
// checkpoint.ErrTruncated or checkpoint.ErrUnsupportedVersion).
type CorruptError struct {
	Key  string // the file at fault
	What string // "is truncated (…)", "is missing", …
	Next string // the safe next step
	Err  error  // the decoder's error, if any
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s %s; %s; ckgate will not overwrite it (`ckgate inspect` lists every problem of the checkpoint)", e.Key, e.What, e.Next)
}

func (e *CorruptError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrCorrupt}
	}
	return []error{ErrCorrupt, e.Err}
}

// refuse describes why the bytes of key cannot be used.
func refuse(key string, data []byte, err error) *CorruptError {
	e := &CorruptError{Key: key, Next: checkpoint.NextRestore, Err: err}
	var ve *checkpoint.VersionError
	switch {
	case errors.As(err, &ve):
		e.What = fmt.Sprintf("has format version v%d, newer than this ckgate understands (%s up to v%d)", ve.Found, ve.What, ve.Max)
		e.Next = checkpoint.NextNewer
	case data != nil && len(bytes.TrimSpace(data)) == 0:
		e.What = fmt.Sprintf("is empty (%d bytes): a write was cut short or the file was emptied", len(data))
	case errors.Is(err, checkpoint.ErrTruncated):
		e.What = fmt.Sprintf("is truncated (%v)", err)
	default:
		e.What = fmt.Sprintf("is corrupt (%v)", err)
	}
	return e
}

// missing is the error for a file a restart needs that is gone.
func missing(key, why string) *CorruptError {
	return &CorruptError{Key: key, What: "is missing: " + why, Next: checkpoint.NextRestore}
}

// Preflight checks, without writing anything, that a restart of s can use
// the checkpoint in st: the checks Open makes before it takes the writer
// session (see preflight). A caller that reads the checkpoint before Open
// (a policy guard, say) runs it first, so that a damaged checkpoint is
// refused with a *CorruptError naming the file and the safe next step.
func Preflight(ctx context.Context, st gateway.Store, s *spec.Spec) error {
	return preflight(ctx, st, s)
}

// preflight checks, before Open takes the writer session and so before
// anything is written, every file a restart reads: metadata, the latest
// offsets and commit and how the two logs relate (Spark's restart rules),
// ckgate's plan, the operator metadata, a file source's log, and the state
// file chains the commit a restart resumes from names. The first problem
// is a *CorruptError naming the file and the safe next step.
func preflight(ctx context.Context, st gateway.Store, s *spec.Spec) error {
	L, err := latestID(ctx, st, checkpoint.OffsetsDir)
	if err != nil {
		return err
	}
	C, err := latestID(ctx, st, checkpoint.CommitsDir)
	if err != nil {
		return err
	}
	// get reads key; a missing one is (nil, nil), an empty one non-nil
	get := func(key string) ([]byte, error) {
		data, _, err := gateway.GetBounded(ctx, st, key, 0)
		if errors.Is(err, gateway.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
		if data == nil {
			data = []byte{}
		}
		return data, nil
	}
	data, err := get(checkpoint.MetadataKey)
	if err != nil {
		return err
	}
	switch {
	case data == nil && (L >= 0 || C >= 0):
		return &CorruptError{Key: checkpoint.MetadataKey,
			What: fmt.Sprintf("is missing but the offset and commit logs hold batches (latest offsets %d, commit %d): it holds the query id, and a new id must not be written over old offsets (SPARK-55058)", L, C),
			Next: "restore the checkpoint with its \"metadata\" from an archive (`ckgate archive verify ARCHIVE`, then `ckgate restore ARCHIVE DEST` into a new root and run on DEST) or start over with `ckgate fresh-start`"}
	case data != nil:
		if _, err := checkpoint.DecodeStreamMetadata(data); err != nil {
			return refuse(checkpoint.MetadataKey, data, err)
		}
	}
	switch {
	case C > L:
		return &CorruptError{Key: checkpoint.CommitKey(C),
			What: fmt.Sprintf("is ahead of the offset log (latest offsets/%d): a commit without its offsets entry; Spark would re-run batch %d and fail to log it", max(L, -1), max(L, 0)),
			Next: fmt.Sprintf("restore the checkpoint with offsets/%d from an archive (`ckgate restore ARCHIVE DEST`) or start over with `ckgate fresh-start`; do not delete log entries by hand", C)}
	case L >= 0 && C < L-1:
		return &CorruptError{Key: checkpoint.OffsetsKey(L),
			What: fmt.Sprintf("is ahead of the commit log by more than one batch (latest commit %d)", C),
			Next: fmt.Sprintf("restore the checkpoint with commits %d..%d from an archive (`ckgate restore ARCHIVE DEST`) or start over with `ckgate fresh-start`", C+1, L-1)}
	}
	decode := func(key string, why string, dec func([]byte) error) error {
		data, err := get(key)
		if err != nil {
			return err
		}
		if data == nil {
			return missing(key, why)
		}
		if err := dec(data); err != nil {
			return refuse(key, data, err)
		}
		return nil
	}
	offsets := func(data []byte) error { _, err := checkpoint.DecodeOffsetSeq(data); return err }
	var resume *checkpoint.CommitMetadata
	commit := func(data []byte) (err error) { resume, err = checkpoint.DecodeCommit(data); return err }
	if L >= 0 {
		if err := decode(checkpoint.OffsetsKey(L), "the latest offsets entry", offsets); err != nil {
			return err
		}
	}
	if L > 0 {
		why := fmt.Sprintf("offsets/%d exists, and a restart reads the offsets of the batch before it (Spark: \"batch %d doesn't exist\")", L, L-1)
		if err := decode(checkpoint.OffsetsKey(L-1), why, offsets); err != nil {
			return err
		}
	}
	if C >= 0 {
		if err := decode(checkpoint.CommitKey(C), "the latest commit", commit); err != nil {
			return err
		}
	}
	if data, err := get(gateway.WriterKey); err != nil {
		return err
	} else if data != nil {
		if _, err := gateway.ParseWriterRecord(data); err != nil {
			e := refuse(gateway.WriterKey, data, fmt.Errorf("%w: %v", checkpoint.ErrCorrupt, err))
			e.Next = "it is ckgate's single-writer lock, not checkpoint data: make sure no ckgate run uses this checkpoint, then remove it with `ckgate store rm URL " + gateway.WriterKey + "` (the next run creates a new one)"
			return e
		}
	}
	if data, err := get(checkpoint.PlanKey); err != nil {
		return err
	} else if data != nil {
		if _, err := checkpoint.DecodePlan(data); err != nil {
			return refuse(checkpoint.PlanKey, data, err)
		}
	}
	if data, err := get(checkpoint.OperatorMetadataKey("0")); err != nil {
		return err
	} else if data != nil {
		if _, err := checkpoint.DecodeOperatorMetadata(data); err != nil {
			return refuse(checkpoint.OperatorMetadataKey("0"), data, err)
		}
	}
	if key := checkpoint.SourcesDir + "/0/0"; s.Source.Kind == spec.SourceKafka || s.Source.Kind == spec.SourceRate {
		data, err := get(key)
		if err != nil {
			return err
		}
		if data != nil {
			if err := decodeSourceStart(s.Source.Kind, data); err != nil {
				return refuse(key, data, err)
			}
		}
	}
	if s.Source.Kind == spec.SourceFiles {
		dir := checkpoint.SourcesDir + "/0"
		if _, _, err := checkpoint.ReadFileSourceLog(ctx, st, dir); err != nil && !errors.Is(err, gateway.ErrNotFound) {
			if !errors.Is(err, checkpoint.ErrCorrupt) && !errors.Is(err, checkpoint.ErrUnsupportedVersion) {
				return fmt.Errorf("file source log %s: %w", dir, err)
			}
			key := dir
			var ke *checkpoint.KeyError
			if errors.As(err, &ke) {
				key, err = ke.Key, ke.Err
			}
			e := refuse(key, nil, err)
			e.What += " (a file source log entry: the files each batch read)"
			return e
		}
	}
	if resume != nil {
		return checkStateChains(ctx, st, C, resume)
	}
	return nil
}

// decodeSourceStart checks sources/0/0 of a Kafka source (its initial
// offsets) or a rate source ("v1\n<start epoch ms>").
func decodeSourceStart(kind string, data []byte) error {
	if kind == spec.SourceKafka {
		_, err := checkpoint.DecodeKafkaInitialOffsets(data)
		return err
	}
	v, ms, ok := strings.Cut(strings.TrimSpace(string(data)), "\n")
	if n, err := strconv.Atoi(strings.TrimPrefix(v, "v")); err == nil && strings.HasPrefix(v, "v") && n > 1 {
		return &checkpoint.VersionError{What: "rate source start time", Found: n, Max: 1}
	}
	if _, err := strconv.ParseInt(strings.TrimSpace(ms), 10, 64); !ok || v != "v1" || err != nil {
		return fmt.Errorf("%w: not a rate source start time (want v1 and epoch ms)", checkpoint.ErrCorrupt)
	}
	return nil
}

// checkStateChains reads and checks every state file that commits/n names
// for operator 0, and the files each builds on.
func checkStateChains(ctx context.Context, st gateway.Store, n int64, cm *checkpoint.CommitMetadata) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(2, runtime.GOMAXPROCS(0)))
	for p, names := range cm.StateUniqueIDs[0] {
		if len(names) == 0 || names[0] == "" {
			continue
		}
		g.Go(func() error {
			dir := "state/0/" + strconv.Itoa(p) + "/"
			for name, depth := names[0], 0; name != ""; depth++ {
				if depth > 100000 {
					return &CorruptError{Key: dir + names[0], What: "starts a state chain longer than 100000 files", Next: checkpoint.NextRestore}
				}
				key := dir + name
				// Streamed: a state file of any size is checked holding one
				// record at a time, and damage stops the read where it starts.
				rc, _, err := st.GetStream(ctx, key)
				if errors.Is(err, gateway.ErrNotFound) {
					return missing(key, fmt.Sprintf("%s names state file %s of partition %d, and a restart rebuilds the state from it", checkpoint.CommitKey(n), names[0], p))
				}
				if err != nil {
					return fmt.Errorf("read %s: %w", key, err)
				}
				h, size, err := state.Check(rc)
				rc.Close()
				if gateway.KindOf(err) != nil {
					return fmt.Errorf("read %s: %w", key, err)
				}
				if err != nil {
					var empty []byte
					if size == 0 {
						empty = []byte{}
					}
					return refuse(key, empty, err)
				}
				name = h.Base
			}
			return nil
		})
	}
	return g.Wait()
}

// recover finds where to resume (Spark's populateStartOffsets).
func (q *Query) recover(ctx context.Context) error {
	L, err := latestID(ctx, q.cp, checkpoint.OffsetsDir)
	if err != nil {
		return err
	}
	C, err := latestID(ctx, q.cp, checkpoint.CommitsDir)
	if err != nil {
		return err
	}
	q.restored.LastCommitted, q.restored.RerunBatch = C, -1
	switch {
	case L < 0 && C < 0:
		q.restored.New = true
		return nil
	case C > L:
		return fmt.Errorf("%w: commits/%d without offsets/%d", ErrCorrupt, C, C)
	case C < L-1:
		return fmt.Errorf("%w: offsets/%d but the latest commit is commits/%d (want %d or %d)", ErrCorrupt, L, C, L-1, L)
	}
	last, err := q.readOffsets(ctx, L)
	if err != nil {
		return err
	}
	if C == L {
		cm, err := q.readCommit(ctx, C)
		if err != nil {
			return err
		}
		if err := q.setTips(C, cm); err != nil {
			return err
		}
		q.next, q.start = L+1, last.end
		q.wm = max(last.wm, cm.NextBatchWatermarkMs)
		q.lastWm, q.lastBatch = last.wm, L
		q.restored.Watermark = q.wm
		return nil
	}
	// offsets/L without commits/L: re-run L from offsets/L-1's end
	if L > 0 {
		prev, err := q.readOffsets(ctx, L-1)
		if err != nil {
			return err
		}
		last.start = prev.end
		cm, err := q.readCommit(ctx, L-1)
		if err != nil {
			return err
		}
		if err := q.setTips(L-1, cm); err != nil {
			return err
		}
		q.lastWm = prev.wm
	}
	q.next, q.start, q.wm, q.rerun, q.lastBatch = L, last.start, last.wm, last, L-1
	q.restored.RerunBatch, q.restored.Watermark = L, last.wm
	return nil
}

func (q *Query) readOffsets(ctx context.Context, n int64) (*logged, error) {
	key := checkpoint.OffsetsKey(n)
	data, _, err := gateway.GetBounded(ctx, q.cp, key, 0)
	if err != nil {
		if errors.Is(err, gateway.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s is missing", ErrCorrupt, key)
		}
		return nil, err
	}
	return decodeOffsets(key, n, data)
}

func decodeOffsets(key string, n int64, data []byte) (*logged, error) {
	seq, err := checkpoint.DecodeOffsetSeq(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if len(seq.Sources) != 1 {
		return nil, fmt.Errorf("%s: %w: %d sources in the checkpoint offsets and now there is 1", key, ErrIncompatible, len(seq.Sources))
	}
	l := &logged{batch: n}
	if seq.Sources[0].Present {
		l.end = seq.Sources[0].JSON
	}
	if seq.Metadata != nil {
		l.wm, l.ts = seq.Metadata.BatchWatermarkMs, seq.Metadata.BatchTimestampMs
		if err := operator.CheckEventTime(l.wm); err != nil {
			return nil, fmt.Errorf("%s: %w: batchWatermarkMs: %w", key, ErrCorrupt, err)
		}
	}
	return l, nil
}

func (q *Query) readCommit(ctx context.Context, n int64) (*checkpoint.CommitMetadata, error) {
	key := checkpoint.CommitKey(n)
	data, _, err := gateway.GetBounded(ctx, q.cp, key, 0)
	if err != nil {
		if errors.Is(err, gateway.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s is missing", ErrCorrupt, key)
		}
		return nil, err
	}
	cm, err := checkpoint.DecodeCommit(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if err := operator.CheckEventTime(cm.NextBatchWatermarkMs); err != nil {
		return nil, fmt.Errorf("%s: %w: nextBatchWatermarkMs: %w", key, ErrCorrupt, err)
	}
	return cm, nil
}

// setTips takes the state file of every partition from commit n.
func (q *Query) setTips(n int64, cm *checkpoint.CommitMetadata) error {
	for p := range q.tips {
		q.tips[p] = state.Tip{}
	}
	if !q.op.Stateful() {
		return nil
	}
	ids := cm.StateUniqueIDs[0]
	if ids == nil {
		if len(cm.StateUniqueIDs) == 0 && n >= 0 {
			return nil // no state yet
		}
		return fmt.Errorf("%s: %w: no state files for operator 0", checkpoint.CommitKey(n), ErrCorrupt)
	}
	if len(ids) != q.parts {
		return fmt.Errorf("%s: %w: state of %d partitions, the checkpoint's plan has %d", checkpoint.CommitKey(n), ErrCorrupt, len(ids), q.parts)
	}
	for p, f := range ids {
		if len(f) > 0 {
			q.tips[p] = state.Tip{Name: f[0]}
		}
	}
	return nil
}

// tipIDs renders the tips for commits/N.
func (q *Query) tipIDs() map[int64][][]string {
	if !q.op.Stateful() {
		return nil
	}
	ids := make([][]string, q.parts)
	for p, t := range q.tips {
		ids[p] = []string{}
		if t.Name != "" {
			ids[p] = []string{t.Name}
		}
	}
	return map[int64][][]string{0: ids}
}

// loadState rebuilds every partition from its tip, in parallel.
func (q *Query) loadState(ctx context.Context) (files int, bytes int64, err error) {
	if q.loaded || !q.op.Stateful() {
		q.loaded = true
		return 0, 0, nil
	}
	tips := make([]string, q.parts)
	for p, t := range q.tips {
		tips[p] = t.Name
	}
	var reserve func(p, n int)
	if r, ok := q.op.(operator.Reserver); ok {
		reserve = r.Reserve
	}
	loaded, err := q.st.LoadAll(ctx, tips, max(2, runtime.GOMAXPROCS(0)), reserve, q.op.Restore)
	if err != nil {
		return 0, 0, err
	}
	for p, l := range loaded {
		if tips[p] == "" {
			continue
		}
		q.tips[p] = l.Tip
		files += l.Files
		bytes += l.Bytes
	}
	q.loaded = true
	return files, bytes, nil
}

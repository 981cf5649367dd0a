package rehearse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/sink"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/engine/state"
	"github.com/ckgate/ckgate/gateway"
)

// logBatch is one committed batch of a checkpoint: its watermark and the
// input files it read (full paths, as the file source log records them).
type logBatch struct {
	ID        int64
	Watermark int64
	EndOffset int64
	Files     []string
}

// readBatches returns the committed batches of the checkpoint in cp,
// in order, with the files each read.
func readBatches(ctx context.Context, cp gateway.Store) ([]logBatch, error) {
	ids, err := logIDs(ctx, cp, checkpoint.CommitsDir)
	if err != nil {
		return nil, err
	}
	entries, _, err := checkpoint.ReadFileSourceLog(ctx, cp, "sources/0")
	if err != nil && !errors.Is(err, gateway.ErrNotFound) && !errors.Is(err, checkpoint.ErrNotCheckpoint) {
		return nil, fmt.Errorf("file source log sources/0: %w", err)
	}
	var out []logBatch
	prev := int64(-1)
	for _, id := range ids {
		key := checkpoint.OffsetsKey(id)
		data, _, err := gateway.GetBounded(ctx, cp, key, 0)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
		seq, err := checkpoint.DecodeOffsetSeq(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		b := logBatch{ID: id, EndOffset: prev}
		if seq.Metadata != nil {
			b.Watermark = seq.Metadata.BatchWatermarkMs
		}
		if len(seq.Sources) > 0 && seq.Sources[0].Present {
			if b.EndOffset, err = checkpoint.DecodeFileSourceOffset(seq.Sources[0].JSON); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
		}
		for _, e := range entries {
			if e.BatchID > prev && e.BatchID <= b.EndOffset {
				b.Files = append(b.Files, e.Path)
			}
		}
		prev = max(prev, b.EndOffset)
		out = append(out, b)
	}
	return out, nil
}

// logIDs lists the numeric entries of dir (offsets or commits) in order.
func logIDs(ctx context.Context, cp gateway.Store, dir string) ([]int64, error) {
	var out []int64
	for a, err := range cp.List(ctx, dir+"/") {
		if err != nil {
			if errors.Is(err, gateway.ErrNotFound) {
				break
			}
			return nil, fmt.Errorf("list %s: %w", dir, err)
		}
		name := strings.TrimPrefix(a.Key, dir+"/")
		if n, err := strconv.ParseInt(name, 10, 64); err == nil && !strings.Contains(name, "/") {
			out = append(out, n)
		}
	}
	slicesSort(out)
	return out, nil
}

func slicesSort(xs []int64) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// truncateAt turns the isolated copy in cp into the checkpoint as it was
// when batch n was logged but not committed: commits/n.. and offsets/n+1..
// are removed, with the file source log entries past batch n's end offset
// and the http sink's ledger entries of batch n on. A restart then re-runs
// batch n with exactly its logged offsets from the state of batch n-1.
func truncateAt(ctx context.Context, cp gateway.Store, batches []logBatch, n int64) error {
	var end int64 = -1
	for _, b := range batches {
		if b.ID == n {
			end = b.EndOffset
		}
	}
	var doomed []string
	add := func(prefix string, keep func(rest string) bool) error {
		for a, err := range cp.List(ctx, prefix) {
			if err != nil {
				return fmt.Errorf("list %s: %w", prefix, err)
			}
			if !keep(strings.TrimPrefix(a.Key, prefix)) {
				doomed = append(doomed, a.Key)
			}
		}
		return nil
	}
	num := func(rest string) (int64, bool) {
		first, _, _ := strings.Cut(rest, "/")
		first = strings.TrimSuffix(first, ".compact")
		v, err := strconv.ParseInt(first, 10, 64)
		return v, err == nil
	}
	steps := []struct {
		prefix string
		keep   func(string) bool
	}{
		{checkpoint.CommitsDir + "/", func(r string) bool { v, ok := num(r); return !ok || v < n }},
		{checkpoint.OffsetsDir + "/", func(r string) bool { v, ok := num(r); return !ok || v <= n }},
		{"sources/0/", func(r string) bool { v, ok := num(r); return !ok || v <= end }},
		{sink.EffectsDir + "/", func(r string) bool { v, ok := num(r); return !ok || v < n }},
	}
	for _, s := range steps {
		if err := add(s.prefix, s.keep); err != nil {
			return err
		}
	}
	for _, k := range doomed {
		if err := cp.Delete(ctx, k, gateway.None()); err != nil && !errors.Is(err, gateway.ErrNotFound) {
			return fmt.Errorf("truncate the isolated copy at batch %d: delete %s: %w", n, k, err)
		}
	}
	// a file source log compacted past the boundary whose earlier entries
	// were purged cannot be cut back there
	want := 0
	for _, b := range batches {
		if b.ID <= n {
			want += len(b.Files)
		}
	}
	if want > 0 {
		entries, _, err := checkpoint.ReadFileSourceLog(ctx, cp, "sources/0")
		if err != nil || len(entries) != want {
			return setupErrorf("the file source log up to batch %d cannot be restored (%d of %d entries left after the cut: %v): its entries were compacted past the boundary and purged; give a later --from-batch", n, len(entries), want, err)
		}
	}
	return nil
}

// isolatedSinkIdentity is the sink identity the engine records for the
// redirected sink of s (a files sink at a local path, or an http sink).
func isolatedSinkIdentity(s *spec.Spec) (map[string]string, error) {
	switch s.Sink.Kind {
	case spec.SinkFiles:
		u, err := gateway.ParseURL(s.Sink.Path)
		if err != nil {
			return nil, err
		}
		return map[string]string{"kind": spec.SinkFiles, "path": strings.TrimSuffix(u.String(), "/"), "format": s.Sink.Format}, nil
	case spec.SinkHTTP:
		return map[string]string{"kind": spec.SinkHTTP, "url": gateway.Redact(s.Sink.URL), sink.URLHashKey: sink.URLHash(s.Sink.URL)}, nil
	}
	return nil, fmt.Errorf("sink kind %s", s.Sink.Kind)
}

// redirectPlanSink rewrites the isolated copy's _ckgate/plan.json so that
// it names the drill's own sink: the copy's output goes to an isolated
// target, never to the production one. Only the "sink" field changes.
func redirectPlanSink(ctx context.Context, cp gateway.Store, s *spec.Spec) error {
	data, v, err := gateway.GetBounded(ctx, cp, checkpoint.PlanKey, 0)
	if errors.Is(err, gateway.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s of the isolated copy: %w", checkpoint.PlanKey, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s of the isolated copy: %w", checkpoint.PlanKey, err)
	}
	id, err := isolatedSinkIdentity(s)
	if err != nil {
		return err
	}
	if m["sink"], err = json.Marshal(id); err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	if _, err := cp.Put(ctx, checkpoint.PlanKey, b.Bytes(), gateway.IfMatch(v)); err != nil {
		return fmt.Errorf("write %s of the isolated copy: %w", checkpoint.PlanKey, err)
	}
	return nil
}

// stateAt counts the state rows and bytes that commits/n names (zeros
// for n < 0 or a stateless query).
func stateAt(ctx context.Context, cp gateway.Store, n int64) (rows, bytes int64, err error) {
	if n < 0 {
		return 0, 0, nil
	}
	key := checkpoint.CommitKey(n)
	data, _, err := gateway.GetBounded(ctx, cp, key, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("read %s: %w", key, err)
	}
	cm, err := checkpoint.DecodeCommit(data)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", key, err)
	}
	ids := cm.StateUniqueIDs[0]
	if len(ids) == 0 {
		return 0, 0, nil
	}
	tips := make([]string, len(ids))
	for p, f := range ids {
		if len(f) > 0 {
			tips[p] = f[0]
		}
	}
	live := make([]map[string]bool, len(tips))
	loaded, err := state.New(cp, 0, state.Policy{}).LoadAll(ctx, tips, 2, nil, func(p int, c state.Change) error {
		if live[p] == nil {
			live[p] = map[string]bool{}
		}
		if c.Delete {
			delete(live[p], string(c.Key))
		} else {
			live[p][string(c.Key)] = true
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("state named by %s: %w", key, err)
	}
	for p := range tips {
		rows += int64(len(live[p]))
		bytes += loaded[p].Bytes
	}
	return rows, bytes, nil
}

// boundedInput hides every input key but those allowed: both runs read
// exactly the files of the bounded batch range.
func boundedInput(s gateway.Store, allowed map[string]bool) gateway.Store {
	return &filtered{Store: s, allowed: allowed}
}

type filtered struct {
	gateway.Store
	allowed map[string]bool
}

func (f *filtered) Get(ctx context.Context, key string) ([]byte, gateway.Version, error) {
	if !f.allowed[key] {
		return nil, "", gateway.E("get", key, gateway.ErrNotFound, errors.New("outside the rehearsal's bounded input"))
	}
	return f.Store.Get(ctx, key)
}

func (f *filtered) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	if !f.allowed[key] {
		return nil, gateway.Attrs{}, gateway.E("get", key, gateway.ErrNotFound, errors.New("outside the rehearsal's bounded input"))
	}
	return f.Store.GetStream(ctx, key)
}

func (f *filtered) Stat(ctx context.Context, key string) (gateway.Attrs, error) {
	if !f.allowed[key] {
		return gateway.Attrs{}, gateway.E("stat", key, gateway.ErrNotFound, errors.New("outside the rehearsal's bounded input"))
	}
	return f.Store.Stat(ctx, key)
}

func (f *filtered) List(ctx context.Context, prefix string) iter.Seq2[gateway.Attrs, error] {
	return func(yield func(gateway.Attrs, error) bool) {
		for a, err := range f.Store.List(ctx, prefix) {
			if err == nil && !f.allowed[a.Key] && !strings.HasSuffix(a.Key, "/") {
				continue
			}
			if !yield(a, err) {
				return
			}
		}
	}
}

// inputKey turns a file source log path into the key of the input store
// at input ("" when it is not under it).
func inputKey(input, path string) string {
	in := strings.TrimSuffix(input, "/") + "/"
	if k, ok := strings.CutPrefix(path, in); ok {
		return k
	}
	if u, err := gateway.ParseURL(path); err == nil {
		if k, ok := strings.CutPrefix(strings.TrimSuffix(u.String(), "/"), in); ok {
			return k
		}
	}
	return filepath.ToSlash(strings.TrimPrefix(path, in))
}

// readRunOutput returns the rows of an isolated files sink whose manifest
// log starts at the boundary batch (a restored run's first batch is not
// 0): every manifest from the latest compaction file on, in batch order.
func readRunOutput(ctx context.Context, st gateway.Store) ([]string, error) {
	return readSink(ctx, st, checkpoint.ReadFileSinkLogTail)
}

package rehearse

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckgate/ckgate/engine/expr"
	"github.com/ckgate/ckgate/engine/operator"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// inputFile is one file of the input, as the files source reads it.
type inputFile struct {
	Key  string
	Data []byte
}

// hidden mirrors the files source: names starting with "." or "_" are not
// input.
func hidden(key string) bool {
	for _, seg := range strings.Split(key, "/") {
		if strings.HasPrefix(seg, ".") || strings.HasPrefix(seg, "_") {
			return true
		}
	}
	return false
}

// loadInput reads every input file of st in name order.
func loadInput(ctx context.Context, st gateway.Store) ([]inputFile, error) {
	var files []inputFile
	for a, err := range st.List(ctx, "") {
		if err != nil {
			return nil, fmt.Errorf("list input: %w", err)
		}
		if hidden(a.Key) {
			continue
		}
		data, _, err := st.Get(ctx, a.Key)
		if err != nil {
			return nil, fmt.Errorf("read input %s: %w", a.Key, err)
		}
		files = append(files, inputFile{Key: a.Key, Data: data})
	}
	return files, nil
}

// lines calls f for every non-blank line of data.
func lines(data []byte, f func([]byte) error) error {
	for l := range bytes.SplitSeq(data, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			if err := f(l); err != nil {
				return err
			}
		}
	}
	return nil
}

// planStats is what the batch plan implies about lateness: the files
// source reads max_files_per_batch files per batch in name order, and the
// watermark of a batch is the largest event time of earlier batches minus
// the delay.
type planStats struct {
	Rows         int64
	LateDropped  int64 // at or below the batch watermark (stateful operators)
	LateAccepted int64 // below the largest event time seen before the batch, above its watermark
	// Watermark[i] and MaxSeen[i] are those of the batch reading chunk i.
	Watermark, MaxSeen []int64
}

// simulate walks the batch plan of files.
func simulate(s *spec.Spec, files []inputFile) (planStats, error) {
	var where *expr.Expr
	if s.Where != "" {
		var err error
		if where, err = expr.Parse(s.Where); err != nil {
			return planStats{}, err
		}
	}
	per := s.Source.MaxFilesPerBatch
	if per <= 0 {
		per = spec.DefaultMaxFilesPerBatch
	}
	var st planStats
	wm, seen := int64(0), int64(-1<<63)
	tf := row.NewField(s.EventTime)
	delay := s.Watermark.Ms()
	for lo := 0; lo < len(files); lo += per {
		st.Watermark = append(st.Watermark, wm)
		st.MaxSeen = append(st.MaxSeen, seen)
		batchMax := int64(-1 << 63)
		for _, f := range files[lo:min(len(files), lo+per)] {
			err := lines(f.Data, func(l []byte) error {
				st.Rows++
				if s.EventTime == "" {
					return nil
				}
				r, err := row.ParseJSON(l)
				if err != nil {
					return fmt.Errorf("input %s: %w", f.Key, err)
				}
				ts, ok := operator.EventTime(tf.Get(&r))
				if !ok {
					return nil
				}
				batchMax = max(batchMax, ts)
				if where != nil && !where.Match(&r) {
					return nil
				}
				switch {
				case s.Stateful() && ts <= wm:
					st.LateDropped++
				case ts < seen:
					st.LateAccepted++
				}
				return nil
			})
			if err != nil {
				return planStats{}, err
			}
		}
		if batchMax > int64(-1<<63) {
			seen = max(seen, batchMax)
			if s.EventTime != "" {
				wm = max(wm, batchMax-delay)
			}
		}
	}
	return st, nil
}

// lateInput is the input of the late-events scenario.
type lateInput struct {
	Files                  []inputFile
	Inside, Beyond, Copies int    // rows injected
	Chunk                  int    // the chunk (data batch) that reads them
	Key                    string // the injected file
}

// buildLateInput returns files plus one file that sorts last and holds rows
// with event times inside the watermark delay of the batch that reads it,
// rows at and beyond its watermark, and exact copies of earlier rows (of
// the latest batch and of the first file). Template rows are input rows
// that pass the filter, so only their event time decides their fate. A
// query without a watermark (no event time, or no stateful operator) gets
// the copies only.
func buildLateInput(s *spec.Spec, files []inputFile) (*lateInput, error) {
	per := s.Source.MaxFilesPerBatch
	if per <= 0 {
		per = spec.DefaultMaxFilesPerBatch
	}
	chunk := len(files) / per
	li := &lateInput{Chunk: chunk, Key: files[len(files)-1].Key + "-rehearse-late.jsonl"}
	var buf bytes.Buffer
	pick := func(xs [][]byte, n int) [][]byte {
		var out [][]byte
		for i := 0; i < n && len(xs) > 0; i++ {
			out = append(out, xs[(i*7919)%len(xs)])
		}
		return out
	}
	var first, recent [][]byte
	_ = lines(files[0].Data, func(l []byte) error { first = append(first, l); return nil })
	for _, f := range files[max(0, chunk-1)*per : min(len(files), max(1, chunk)*per)] {
		_ = lines(f.Data, func(l []byte) error { recent = append(recent, l); return nil })
	}
	watermarked := s.EventTime != "" && s.Stateful()
	if watermarked {
		if strings.Contains(s.EventTime, ".") {
			return nil, fmt.Errorf("event_time %q is a nested field: late rows are not generated for it", s.EventTime)
		}
		if chunk == 0 {
			return nil, fmt.Errorf("the input (%d files) is one batch of max_files_per_batch %d: there is no watermark to be late against", len(files), per)
		}
		if err := lateRows(s, files, chunk, per, &buf, li, pick); err != nil {
			return nil, err
		}
	}
	for _, l := range append(pick(recent, 5), pick(first, 3)...) {
		buf.Write(append(append([]byte{}, l...), '\n'))
		li.Copies++
	}
	li.Files = append(append([]inputFile{}, files...), inputFile{Key: li.Key, Data: buf.Bytes()})
	return li, nil
}

// lateRows writes the rows inside and beyond the watermark delay of the
// batch reading chunk.
func lateRows(s *spec.Spec, files []inputFile, chunk, per int, buf *bytes.Buffer, li *lateInput, pick func([][]byte, int) [][]byte) error {
	// the watermark of the batch reading chunk comes from the chunks before it
	plan, err := simulate(s, append(append([]inputFile{}, files[:chunk*per]...), inputFile{Key: "~"}))
	if err != nil {
		return err
	}
	wm := plan.Watermark[chunk]
	if wm <= 0 {
		return fmt.Errorf("the watermark never rises above 0 before the last batch: nothing can be late")
	}
	var where *expr.Expr
	if s.Where != "" {
		if where, err = expr.Parse(s.Where); err != nil {
			return err
		}
	}
	tf := row.NewField(s.EventTime)
	// templates: rows of the latest full chunk that pass the filter
	var templates [][]byte
	for _, f := range files[(chunk-1)*per : chunk*per] {
		_ = lines(f.Data, func(l []byte) error {
			r, err := row.ParseJSON(l)
			if err != nil {
				return nil
			}
			if _, ok := operator.EventTime(tf.Get(&r)); ok && (where == nil || where.Match(&r)) {
				templates = append(templates, l)
			}
			return nil
		})
	}
	if len(templates) == 0 {
		return fmt.Errorf("no row of the latest batch passes the filter: no template for late rows")
	}
	half := max(1, s.Watermark.Ms()/2)
	for i, t := range pick(templates, 5) {
		// inside the delay: above the watermark
		b, err := withEventTime(t, s.EventTime, wm+half+int64(i))
		if err != nil {
			return err
		}
		buf.Write(append(b, '\n'))
		li.Inside++
	}
	for i, t := range pick(templates, 5) {
		ts := wm - half - int64(i)*60_000
		if i == 0 {
			ts = wm // at the watermark: dropped (Spark's rule)
		}
		b, err := withEventTime(t, s.EventTime, ts)
		if err != nil {
			return err
		}
		buf.Write(append(b, '\n'))
		li.Beyond++
	}
	return nil
}

// withEventTime returns the JSON object line with field set to ms, written
// the way the line wrote it (epoch milliseconds or RFC 3339).
func withEventTime(line []byte, field string, ms int64) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	switch m[field].(type) {
	case json.Number:
		m[field] = ms
	default:
		m[field] = operator.FormatTime(ms)
	}
	return json.Marshal(m)
}

// writeInput writes files into dir (a new directory).
func writeInput(dir string, files []inputFile) error {
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

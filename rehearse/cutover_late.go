package rehearse

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ckgate/ckgate/engine/expr"
	"github.com/ckgate/ckgate/engine/operator"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
)

// How a run handled one input row.
const (
	rowOnTime   = "on time"
	rowAccepted = "accepted" // older than the newest event seen before its batch, above the watermark
	rowDropped  = "dropped"  // at or below the batch watermark
)

// handled walks the batches the run logged, with the watermark each batch
// ran with, and says how it handled every input row of the batches from
// first on, keyed "file:line". It returns the late rows accepted too.
func handled(s *spec.Spec, batches []logBatch, first int64, input string, data map[string][]byte) (map[string]string, int64, error) {
	out := map[string]string{}
	if s.EventTime == "" {
		return out, 0, nil
	}
	var where *expr.Expr
	if s.Where != "" {
		var err error
		if where, err = expr.Parse(s.Where); err != nil {
			return nil, 0, err
		}
	}
	tf := row.NewField(s.EventTime)
	seen := int64(-1 << 63)
	var accepted int64
	for _, b := range batches {
		batchMax := int64(-1 << 63)
		for _, p := range b.Files {
			key := inputKey(input, p)
			n := 0
			err := lines(data[key], func(l []byte) error {
				n++
				r, err := row.ParseJSON(l)
				if err != nil {
					return fmt.Errorf("input %s line %d: %w", key, n, err)
				}
				ts, ok := operator.EventTime(tf.Get(&r))
				if !ok {
					return nil
				}
				batchMax = max(batchMax, ts)
				if b.ID < first || (where != nil && !where.Match(&r)) {
					return nil
				}
				id := fmt.Sprintf("%s:%d", key, n)
				switch {
				case s.Stateful() && ts <= b.Watermark:
					out[id] = rowDropped
				case ts < seen:
					out[id] = rowAccepted
					accepted++
				default:
					out[id] = rowOnTime
				}
				return nil
			})
			if err != nil {
				return nil, 0, err
			}
		}
		seen = max(seen, batchMax)
	}
	return out, accepted, nil
}

// lateRows compares how the two runs handled each input row and names
// those one dropped as late and the other did not.
func (r *rehearsal) lateRows(ctx context.Context, rc *rehearsal, cur, cand *sideRun, rep *CutoverReport) error {
	data := make(map[string][]byte, len(r.files))
	for _, f := range r.files {
		data[f.Key] = f.Data
	}
	side := func(rr *rehearsal, sr *sideRun) (map[string]string, error) {
		bs, err := readBatches(ctx, sr.d.cp)
		if err != nil {
			return nil, fmt.Errorf("%s run's log: %w", sr.d.name, err)
		}
		m, acc, err := handled(rr.base, bs, sr.first, r.input, data)
		sr.stats.LateAccepted = acc
		return m, err
	}
	hc, err := side(r, cur)
	if err != nil {
		return err
	}
	hn, err := side(rc, cand)
	if err != nil {
		return err
	}
	rep.Current.LateAccepted, rep.Cand.LateAccepted = cur.stats.LateAccepted, cand.stats.LateAccepted
	keys := slices.Sorted(maps.Keys(hc))
	for _, k := range slices.Sorted(maps.Keys(hn)) {
		if _, ok := hc[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		a, b := hc[k], hn[k]
		if a == "" || b == "" || (a != rowDropped && b != rowDropped) || a == b {
			continue
		}
		if len(rep.LateRows) >= MaxNamedRows {
			break
		}
		file, line, _ := strings.Cut(k, ":")
		rep.LateRows = append(rep.LateRows, LateRow{File: file, Row: lineAt(data[file], line), Current: a, Candidate: b})
	}
	return nil
}

// lineAt returns the non-blank line number n (1-based, as a string).
func lineAt(data []byte, n string) string {
	want := 0
	fmt.Sscan(n, &want)
	i, out := 0, ""
	_ = lines(data, func(l []byte) error {
		if i++; i == want {
			out = string(l)
		}
		return nil
	})
	return out
}

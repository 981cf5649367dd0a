package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// rate generates rows {timestamp, value[, key]}: row i has value i, event
// time start + i×1000/rows_per_second ms (as epoch ms in "timestamp"), and
// key = i % keys when keys is set. A row is available once its time has
// come, so a start in the past makes rows available at once (a bounded
// backlog for benchmarks and tests); total_rows ends the stream. The start
// time is fixed by the first run in sources/<i>/0 ("v1\n<epoch ms>", as
// Spark's rate source writes it). The offset is {"offset":N,"timestamp":T}:
// N rows generated so far, T the time of the next row.
type rate struct {
	env     Env
	rps     int64
	keys    int64
	total   int64
	max     int64
	startMs int64
	names   []string
}

var rateNames = []string{"timestamp", "value"}
var rateKeyNames = []string{"timestamp", "value", "key"}

func newRate(ctx context.Context, s *spec.Spec, env Env) (*rate, error) {
	r := &rate{env: env, rps: s.Source.RowsPerSecond, keys: s.Source.Keys, total: s.Source.TotalRows, max: s.Source.MaxRowsPerBatch}
	r.names = rateNames
	if r.keys > 0 {
		r.names = rateKeyNames
	}
	want := env.Now().UnixMilli()
	if s.Source.Start != "" {
		t, err := time.Parse(time.RFC3339Nano, s.Source.Start)
		if err != nil {
			return nil, fmt.Errorf("source.start: %w", err)
		}
		want = t.UnixMilli()
	}
	key := env.Dir + "/0"
	data := []byte("v1\n" + strconv.FormatInt(want, 10))
	e, err := env.CreateEntry(ctx, key, data)
	if errors.Is(err, gateway.ErrFenced) {
		return nil, err
	}
	if err != nil {
		got, _, gerr := gateway.GetBounded(ctx, env.Checkpoint, key, 0)
		if gerr != nil {
			return nil, fmt.Errorf("rate source start time: %w", err)
		}
		e.Data = got
	}
	v, ms, ok := strings.Cut(strings.TrimSpace(string(e.Data)), "\n")
	n, perr := strconv.ParseInt(strings.TrimSpace(ms), 10, 64)
	if !ok || v != "v1" || perr != nil {
		return nil, fmt.Errorf("%s: not a rate source start time (want v1 and epoch ms)", key)
	}
	r.startMs = n
	return r, nil
}

func (r *rate) Identity() map[string]string {
	return map[string]string{"kind": spec.SourceRate, "rows_per_second": strconv.FormatInt(r.rps, 10),
		"keys": strconv.FormatInt(r.keys, 10), "start_ms": strconv.FormatInt(r.startMs, 10)}
}

func (r *rate) Close() error { return nil }

type rateOffset struct {
	Offset    int64 `json:"offset"`
	Timestamp int64 `json:"timestamp"`
}

func (r *rate) parse(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	var o rateOffset
	if err := json.Unmarshal([]byte(s), &o); err != nil || o.Offset < 0 {
		return 0, fmt.Errorf("rate source offset %q: want {\"offset\":N,\"timestamp\":T}", s)
	}
	return o.Offset, nil
}

// mulDiv returns i×m/d and the remainder, as timeOf computes them.
func mulDiv(i, m, d int64) (int64, int64) { return i * m / d, i * m % d }

// timeOf is the event time of row i.
func (r *rate) timeOf(i int64) int64 { return r.startMs + i*1000/r.rps }

func (r *rate) encode(n int64) string {
	return `{"offset":` + strconv.FormatInt(n, 10) + `,"timestamp":` + strconv.FormatInt(r.timeOf(n), 10) + `}`
}

func (r *rate) Next(_ context.Context, start string) (string, error) {
	from, err := r.parse(start)
	if err != nil {
		return "", err
	}
	now := r.env.Now().UnixMilli()
	avail := int64(0)
	if now >= r.startMs {
		el := now - r.startMs
		if el > (1<<62)/r.rps {
			avail = 1 << 62
		} else {
			avail = el*r.rps/1000 + 1
		}
	}
	if r.total > 0 {
		avail = min(avail, r.total)
	}
	if r.max > 0 {
		avail = min(avail, from+r.max)
	}
	if avail <= from {
		return start, nil
	}
	return r.encode(avail), nil
}

func (r *rate) Read(ctx context.Context, start, end string, emit func(*row.Row) error) error {
	from, err := r.parse(start)
	if err != nil {
		return err
	}
	to, err := r.parse(end)
	if err != nil {
		return err
	}
	vals := make([]row.Value, len(r.names))
	rw := row.Row{Names: r.names, Vals: vals}
	// the time and key of row i, kept up to date as i grows (no division
	// per row): ts = startMs + q, where q = i×1000/rps and rem the rest
	if from >= to {
		return nil
	}
	q, rem := mulDiv(from, 1000, r.rps)
	key := int64(0)
	if r.keys > 0 {
		key = from % r.keys
	}
	for i := from; i < to; i++ {
		if i&0xffff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		// a consumer may have changed a value: set every field whole
		vals[0] = row.Value{K: row.Int, I: r.startMs + q}
		vals[1] = row.Value{K: row.Int, I: i}
		if r.keys > 0 {
			vals[2] = row.Value{K: row.Int, I: key}
			if key++; key == r.keys {
				key = 0
			}
		}
		if err := emit(&rw); err != nil {
			return err
		}
		if rem += 1000; rem >= r.rps {
			if r.rps >= 1000 {
				q, rem = q+1, rem-r.rps // rem < 2×rps here
			} else {
				q, rem = q+rem/r.rps, rem%r.rps
			}
		}
	}
	return nil
}

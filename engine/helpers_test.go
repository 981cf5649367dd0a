package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/enginetest"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// world is one test's stores (enginetest.World) and the helpers of this
// package's tests on them.
type world struct{ *enginetest.World }

func newWorld() *world { return &world{enginetest.NewWorld()} }

func (w *world) put(t *testing.T, store, key string, data []byte) {
	t.Helper()
	if _, err := w.Store(store).Put(context.Background(), key, data, gateway.None()); err != nil {
		t.Fatal(err)
	}
}

// event is one generated click.
type event struct {
	ID     int
	User   string
	TS     int64 // ms; invalid events have Bad set
	Bad    bool
	Page   string
	Amount int64
	EpochN bool // written as epoch millis rather than RFC 3339
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// genEvents makes files of clicks moving forward in time with jitter, late
// events (20-40 min behind), duplicates, health checks and bad times.
func genEvents(seed uint64, files, per int) [][]event {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([][]event, files)
	id := 0
	for f := range files {
		base := t0 + int64(f)*4*60_000
		for range per {
			id++
			e := event{ID: id, User: fmt.Sprintf("u%d", r.IntN(6)), TS: base + r.Int64N(4*60_000), Page: []string{"home", "cart", "buy", "health"}[r.IntN(4)],
				Amount: r.Int64N(100), EpochN: r.IntN(2) == 0}
			switch r.IntN(20) {
			case 0, 1:
				e.TS -= 20*60_000 + r.Int64N(20*60_000) // late
			case 2:
				e.Bad = true
			case 3:
				if len(out[f]) > 0 {
					e = out[f][r.IntN(len(out[f]))] // duplicate
				}
			}
			out[f] = append(out[f], e)
		}
	}
	return out
}

func (e event) json() []byte {
	var ts any = time.UnixMilli(e.TS).UTC().Format(time.RFC3339Nano)
	if e.EpochN {
		ts = e.TS
	}
	if e.Bad {
		ts = "yesterday"
	}
	b, _ := json.Marshal(map[string]any{"id": e.ID, "uid": e.uid(), "user_id": e.User, "ts": ts, "page": e.Page, "amount": e.Amount})
	return b
}

// uid is the user as an integer (the engine's single-integer-key path).
func (e event) uid() int64 { return int64(e.User[1] - '0') }

// inputWorld is a new world whose mem://in holds files.
func inputWorld(t *testing.T, files [][]event) *world {
	t.Helper()
	w := newWorld()
	writeEvents(t, w, "in", files)
	return w
}

func writeEvents(t *testing.T, w *world, store string, files [][]event) {
	t.Helper()
	for i, f := range files {
		var b bytes.Buffer
		for _, e := range f {
			b.Write(e.json())
			b.WriteByte('\n')
		}
		w.put(t, store, fmt.Sprintf("clicks-%03d.jsonl", i), b.Bytes())
	}
}

// lastPerWindow keeps, of rows in batch order, the last one of each key
// and window (what an update-mode reader ends up with), sorted.
func lastPerWindow(t *testing.T, rows []string) []string {
	t.Helper()
	last := map[string]string{}
	for _, r := range rows {
		var m map[string]any
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprint(m["user_id"], m["uid"], m["window_start"])
		last[id] = r
	}
	out := make([]string, 0, len(last))
	for _, r := range last {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// sinkRows reads what a reader following _spark_metadata sees, sorted.
func sinkRows(t *testing.T, st gateway.Store, prefix string) []string {
	rows := sinkRowsInOrder(t, st, prefix)
	sort.Strings(rows)
	return rows
}

// sinkRowsInOrder reads the rows in the order of the manifest.
func sinkRowsInOrder(t *testing.T, st gateway.Store, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	files, _, err := checkpoint.ReadFileSinkLog(ctx, st, checkpoint.SinkMetadataDir)
	if err != nil {
		t.Fatalf("sink log: %v", err)
	}
	var rows []string
	for _, f := range files {
		key, ok := strings.CutPrefix(f.Path, prefix)
		if !ok {
			t.Fatalf("sink file %s not under %s", f.Path, prefix)
		}
		data, _, err := st.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		for l := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				rows = append(rows, l)
			}
		}
	}
	return rows
}

// refQuery computes, independently of the engine, what a query over files
// (batches of perBatch files) emits: late events dropped by the batch
// watermark, then sessions, tumbling or sliding windows of the kept events
// (append: those that end at or before the final watermark; update: every
// window, with its final value), or the first row of each id (dedup).
type refQuery struct {
	delay, gap, size, slide int64 // ms; gap for sessions, size (and slide) for windows
	perBatch                int
	where                   func(e event) bool
	intKey                  bool // key by uid (an integer) instead of user_id
	update                  bool
	dedup                   bool
}

// sessionRows is what the reference says the session query (queries[0],
// health pings left out) emits over files.
func sessionRows(files [][]event) []string {
	ref := queries[0].ref
	ref.where = notHealth
	rows, _ := ref.run(files)
	return rows
}

func (q refQuery) run(files [][]event) (rows []string, late int) {
	wm := int64(0)
	var kept []event
	held := map[int]int64{} // dedup: id → expiry
	for b := 0; b*q.perBatch < len(files); b++ {
		maxTS, seen := int64(0), false
		for id, exp := range held {
			if exp <= wm {
				delete(held, id)
			}
		}
		for _, f := range files[b*q.perBatch : min(len(files), (b+1)*q.perBatch)] {
			for _, e := range f {
				if e.Bad {
					continue
				}
				if !seen || e.TS > maxTS {
					maxTS, seen = e.TS, true
				}
				if !q.where(e) {
					continue
				}
				if e.TS <= wm {
					late++
					continue
				}
				if q.dedup {
					if _, dup := held[e.ID]; dup {
						continue
					}
					held[e.ID] = e.TS + q.delay
					rows = append(rows, string(e.json()))
					continue
				}
				kept = append(kept, e)
			}
		}
		if seen {
			wm = max(wm, maxTS-q.delay)
		}
	}
	if q.dedup {
		sort.Strings(rows)
		return rows, late
	}
	byUser := map[string][]event{}
	for _, e := range kept {
		byUser[e.User] = append(byUser[e.User], e)
	}
	emit := func(e0 event, start, end int64, es []event) {
		if end > wm && !q.update {
			return
		}
		var sum int64
		for _, e := range es {
			sum += e.Amount
		}
		key := fmt.Sprintf(`"user_id":%q`, e0.User)
		if q.intKey {
			key = fmt.Sprintf(`"uid":%d`, e0.uid())
		}
		rows = append(rows, fmt.Sprintf(`{%s,"window_start":%q,"window_end":%q,"count":%d,"sum_amount":%d}`,
			key, fmtTime(start), fmtTime(end), len(es), sum))
	}
	for _, es := range byUser {
		slices.SortStableFunc(es, func(a, b event) int { return int(a.TS - b.TS) })
		if q.gap > 0 {
			for i := 0; i < len(es); {
				j := i + 1
				for j < len(es) && es[j].TS < es[j-1].TS+q.gap {
					j++
				}
				emit(es[i], es[i].TS, es[j-1].TS+q.gap, es[i:j])
				i = j
			}
			continue
		}
		slide := q.slide
		if slide == 0 {
			slide = q.size
		}
		windows := map[int64][]event{}
		for _, e := range es {
			last := e.TS - ((e.TS%slide)+slide)%slide
			for s := last; s > e.TS-q.size; s -= slide {
				windows[s] = append(windows[s], e)
			}
		}
		for s, ws := range windows {
			emit(ws[0], s, s+q.size, ws)
		}
	}
	sort.Strings(rows)
	return rows, late
}

func fmtTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

func mustSpec(t testing.TB, y string) *spec.Spec {
	t.Helper()
	s, err := spec.Parse([]byte(y))
	if err != nil {
		t.Fatalf("spec: %v\n%s", err, y)
	}
	return s
}

func openQuery(ctx context.Context, s *spec.Spec, o engine.Options) (*engine.Query, error) {
	return engine.Open(ctx, s, o)
}

// fmtFloat formats f as the sink writes a float.
func fmtFloat(f float64) string {
	var v row.Value = row.FloatV(f)
	return string(v.AppendJSON(nil))
}

// runAll opens the query and runs it until the source has nothing new.
func runAll(ctx context.Context, s *spec.Spec, o engine.Options) ([]engine.Progress, error) {
	q, err := engine.Open(ctx, s, o)
	if err != nil {
		return nil, err
	}
	var ps []engine.Progress
	err = q.Run(ctx, engine.Trigger{AvailableNow: true}, func(p engine.Progress) { ps = append(ps, p) })
	cerr := q.Close(context.Background())
	if err != nil {
		return ps, err
	}
	return ps, cerr
}

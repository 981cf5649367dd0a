package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

// filesQuery is the text of a recovery test query: files from mem://in (at
// most maxFiles a batch, event time ts, watermark 10m, no health pages)
// through operator into files at mem://out. outputMode "" leaves it out.
func filesQuery(name string, maxFiles int, operator, outputMode string, partitions, snapshotEvery int) string {
	mode := ""
	if outputMode != "" {
		mode = "output_mode: " + outputMode + "\n"
	}
	return fmt.Sprintf(`
name: %s
source: {kind: files, path: mem://in, max_files_per_batch: %d}
event_time: ts
watermark: 10m
where: 'page != "health"'
operator: %s
%ssink: {kind: files, path: mem://out}
partitions: %d
state: {snapshot_every: %d}
`, name, maxFiles, operator, mode, partitions, snapshotEvery)
}

var (
	sessionSpec       = filesQuery("sessions", 2, "{kind: session_window, keys: [user_id], gap: 5m, aggregates: [count, {sum: amount}]}", "append", 3, 2)
	tumblingSpec      = filesQuery("windows", 3, "{kind: tumbling_window, keys: [user_id], size: 5m, aggregates: [count, {sum: amount}]}", "", 2, 3)
	slidingUpdateSpec = filesQuery("sliding", 2, "{kind: sliding_window, keys: [uid], size: 6m, slide: 2m, aggregates: [count, {sum: amount}]}", "update", 4, 2)
	tumblingIntSpec   = filesQuery("windows-int", 2, "{kind: tumbling_window, keys: [uid], size: 5m, aggregates: [count, {sum: amount}]}", "", 3, 2)
	dedupSpec         = filesQuery("dedup", 2, "{kind: dedup, keys: [id]}", "", 3, 2)
)

var queries = []struct {
	name string
	spec string
	ref  refQuery
}{
	{"session_window", sessionSpec, refQuery{delay: 10 * 60_000, gap: 5 * 60_000, perBatch: 2}},
	{"tumbling_window", tumblingSpec, refQuery{delay: 10 * 60_000, size: 5 * 60_000, perBatch: 3}},
	{"tumbling_window_int_key", tumblingIntSpec, refQuery{delay: 10 * 60_000, size: 5 * 60_000, perBatch: 2, intKey: true}},
	{"sliding_window_update", slidingUpdateSpec, refQuery{delay: 10 * 60_000, size: 6 * 60_000, slide: 2 * 60_000, perBatch: 2, intKey: true, update: true}},
	{"dedup", dedupSpec, refQuery{delay: 10 * 60_000, perBatch: 2, dedup: true}},
}

// sinkResult is what a reader of the sink ends up with: every row (append)
// or the last row of each key and window (update).
func sinkResult(t *testing.T, w *world, ref refQuery) []string {
	t.Helper()
	rows := sinkRowsInOrder(t, w.Store("out"), "mem://out/")
	if ref.update {
		return lastPerWindow(t, rows)
	}
	sort.Strings(rows)
	return rows
}

func notHealth(e event) bool { return e.Page != "health" }

func TestCleanRunMatchesReference(t *testing.T) {
	for _, tc := range queries {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			w := newWorld()
			files := genEvents(1, 12, 40)
			writeEvents(t, w, "in", files)
			ps, err := runAll(ctx, mustSpec(t, tc.spec), w.Options(nil, 1))
			if err != nil {
				t.Fatal(err)
			}
			ref := tc.ref
			ref.where = notHealth
			want, late := ref.run(files)
			got := sinkResult(t, w, ref)
			if !slices.Equal(got, want) {
				t.Fatalf("sink holds %d rows, reference %d\ngot:\n%s\nwant:\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if len(want) == 0 || late == 0 {
				t.Fatalf("weak test data: %d rows, %d late", len(want), late)
			}
			var gotLate int64
			for _, p := range ps {
				gotLate += p.Ckgate.LateRowsDropped
			}
			if gotLate != int64(late) {
				t.Errorf("late rows dropped: %d, reference %d", gotLate, late)
			}
			// a second run finds nothing new and writes nothing
			before := countKeys(t, w.CP)
			ps2, err := runAll(ctx, mustSpec(t, tc.spec), w.Options(nil, 2))
			if err != nil {
				t.Fatal(err)
			}
			if len(ps2) != 0 {
				t.Errorf("second run ran %d batches, want 0", len(ps2))
			}
			if after := countKeys(t, w.CP); after != before {
				t.Errorf("second run changed the checkpoint: %d keys, then %d", before, after)
			}
		})
	}
}

// TestCrashAtEveryWrite crashes the query at every write it makes (to the
// checkpoint or the sink), and separately makes every write report a
// failure after it happened (an ambiguous outcome); after each, a restart
// finishes the job. The sink must then hold exactly the reference rows.
func TestCrashAtEveryWrite(t *testing.T) {
	for _, tc := range queries {
		t.Run(tc.name, func(t *testing.T) {
			files := genEvents(2, 8, 25)
			ref := tc.ref
			ref.where = notHealth
			want, _ := ref.run(files)

			// count the writes of a clean run
			w := inputWorld(t, files)
			var counted atomic.Int64
			o := w.Options(nil, 1)
			o.Checkpoint = gateway.Intercept(o.Checkpoint, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
				if c.Op == gateway.OpPut {
					counted.Add(1)
				}
				return next(ctx)
			})
			if _, err := runAll(context.Background(), mustSpec(t, tc.spec), o); err != nil {
				t.Fatal(err)
			}
			puts := int(counted.Load())
			if puts < 10 {
				t.Fatalf("only %d checkpoint writes in a clean run", puts)
			}
			total := 2 * puts // sink writes too; the sweep stops when no fault fires
			for _, action := range []gateway.FaultAction{gateway.Crash, gateway.FailAfter} {
				k := 1
				for ; k <= total; k++ {
					name := fmt.Sprintf("%v/write-%d", actionName(action), k)
					if !crashThenRecover(t, name, tc.spec, ref, files, want, gateway.Fault{Op: gateway.OpPut, Nth: k, Action: action}) {
						break
					}
				}
				if k <= puts {
					t.Fatalf("%s: only %d of at least %d writes faulted", actionName(action), k-1, puts)
				}
				t.Logf("%s: recovered from a fault at each of %d writes (%d rows)", actionName(action), k-1, len(want))
			}
		})
	}
}

func actionName(a gateway.FaultAction) string {
	switch a {
	case gateway.Crash:
		return "crash"
	case gateway.FailAfter:
		return "fail-after"
	}
	return "fault"
}

// crashThenRecover runs the query with fault f, then restarts it without
// faults, and compares the sink with want. It reports whether f fired.
func crashThenRecover(t *testing.T, name, specText string, ref refQuery, files [][]event, want []string, f gateway.Fault) bool {
	t.Helper()
	ctx := context.Background()
	w := inputWorld(t, files)
	faults := gateway.NewFaults(f)
	_, err := runAll(ctx, mustSpec(t, specText), w.Options(faults, 1))
	if faults.Fired() == 0 {
		if err != nil {
			t.Fatalf("%s: run without a fault failed: %v", name, err)
		}
		return false
	}
	if err == nil && f.Action == gateway.Crash {
		t.Fatalf("%s: the query went on after a crash", name)
	}
	if err != nil && !errors.Is(err, gateway.ErrUnavailable) {
		t.Fatalf("%s: %v (want an unavailable store)", name, err)
	}
	if _, err := runAll(ctx, mustSpec(t, specText), w.Options(nil, 2)); err != nil {
		t.Fatalf("%s: restart: %v", name, err)
	}
	got := sinkResult(t, w, ref)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: after recovery the sink holds %d rows, the reference %d\ngot:\n%s\nwant:\n%s", name, len(got), len(want),
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	return true
}

func countKeys(t *testing.T, st gateway.Store) int {
	t.Helper()
	n := 0
	for _, err := range st.List(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

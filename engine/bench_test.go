package engine_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/internal/benchsum"
)

// throughputSpec: rate → tumbling-window count over 10,000 keys → no-op
// sink. Event time advances 1 s per 1,000,000 rows; windows are 10 s.
func throughputSpec(rows, perBatch int64) string {
	return fmt.Sprintf(`
name: throughput
source: {kind: rate, rows_per_second: 1000000, keys: 10000, start: "2020-01-01T00:00:00Z", total_rows: %d, max_rows_per_batch: %d}
event_time: timestamp
watermark: 1s
operator: {kind: tumbling_window, keys: [key], size: 10s, aggregates: [count]}
sink: {kind: noop}
partitions: 8
`, rows, perBatch)
}

// plainLoop is the same aggregation over the same events as a plain Go
// loop: the event time and key of row i as the rate source makes them, a
// map of (key, window) → count.
func plainLoop(rows int64) int {
	const start = int64(1577836800000) // 2020-01-01
	type k struct{ key, window int64 }
	m := map[k]int64{}
	for i := range rows {
		ts := start + i*1000/1000000
		w := ts - ts%10000
		m[k{i % 10000, w}]++
	}
	return len(m)
}

// cpuTime is the CPU time (user + system) this process has used: on a
// machine shared with other work, it says what wall time cannot.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func localCheckpoint(b testing.TB) gateway.Store {
	b.Helper()
	st, err := filestore.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return st
}

func BenchmarkThroughput(b *testing.B) {
	const rows, perBatch = 4_000_000, 1_000_000
	s := mustSpec(b, throughputSpec(rows, perBatch))
	var engineTime, loopTime, engineCPU, loopCPU time.Duration
	for b.Loop() {
		o := engine.Options{Checkpoint: localCheckpoint(b), Registry: gateway.NewRegistry(),
			Session: gateway.SessionOptions{Heartbeat: -1}}
		t0, c0 := time.Now(), cpuTime()
		ps, err := runAll(context.Background(), s, o)
		if err != nil {
			b.Fatal(err)
		}
		engineTime += time.Since(t0)
		engineCPU += cpuTime() - c0
		var in int64
		for _, p := range ps {
			in += p.NumInputRows
		}
		if in != rows {
			b.Fatalf("engine read %d rows, want %d", in, rows)
		}
		t0, c0 = time.Now(), cpuTime()
		if plainLoop(rows) == 0 {
			b.Fatal("no windows")
		}
		loopTime += time.Since(t0)
		loopCPU += cpuTime() - c0
	}
	n := float64(b.N * rows)
	eps := n / engineTime.Seconds()
	benchsum.Record(b, "engine_events_per_s", eps, "events/s", ">=1000000")
	benchsum.Record(b, "plain_loop_events_per_s", n/loopTime.Seconds(), "events/s", "")
	benchsum.Record(b, "engine_vs_plain_loop_time", engineTime.Seconds()/loopTime.Seconds(), "ratio", "<=2")
	benchsum.Record(b, "engine_vs_plain_loop_cpu", engineCPU.Seconds()/loopCPU.Seconds(), "ratio", "")
}

// BenchmarkCheckpointOverhead: the writer check, offsets/N and commits/N
// on the local disk, as a share of a 1 s batch.
func BenchmarkCheckpointOverhead(b *testing.B) {
	s := mustSpec(b, throughputSpec(1<<40, 10_000))
	o := engine.Options{Checkpoint: localCheckpoint(b), Registry: gateway.NewRegistry(), Session: gateway.SessionOptions{Heartbeat: -1}}
	ctx := context.Background()
	q, err := engine.Open(ctx, s, o)
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close(ctx)
	var overhead, total time.Duration
	batches := 0
	for b.Loop() {
		p, ran, err := q.RunBatch(ctx)
		if err != nil || !ran {
			b.Fatal(err, ran)
		}
		d := p.Ckgate.DurationUs
		overhead += time.Duration(d["writerCheck"]+d["walCommit"]+d["commitOffsets"]) * time.Microsecond
		total += time.Duration(d["triggerExecution"]) * time.Microsecond
		batches++
	}
	per := overhead / time.Duration(batches)
	benchsum.Record(b, "checkpoint_overhead_ms_per_batch", float64(per.Microseconds())/1000, "ms", "")
	benchsum.Record(b, "checkpoint_share_of_batch_work", 100*overhead.Seconds()/total.Seconds(), "%", "")
	benchsum.Record(b, "checkpoint_overhead_share_of_1s_batch", 100*per.Seconds()/1.0, "%", "<5")
}

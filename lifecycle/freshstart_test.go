package lifecycle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/source"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/lifecycle"
)

// produceAt writes records i = from..to-1 to both partitions of topic,
// each with the value {"p":partition,"i":i} and timestamp ts.
func produceAt(t *testing.T, brokers []string, topic string, from, to int, ts time.Time) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for p := range int32(2) {
		for i := from; i < to; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Timestamp: ts, Value: fmt.Appendf(nil, `{"p":%d,"i":%d}`, p, i)})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// runQuery runs the spec reading topic clicks on the checkpoint at ck,
// writing to out, until no data is left, and returns its batches.
func runQuery(t *testing.T, brokers []string, ck, out string) []engine.Progress {
	t.Helper()
	return runSpec(t, fmt.Sprintf("name: k\nsource: {kind: kafka, brokers: [%s], topic: clicks}\nsink: {kind: files, path: %s}\n",
		strings.Join(brokers, ", "), out), ck)
}

// runSpec runs the spec text on the checkpoint ck until no data is left
// (a new process that takes over at once) and returns its batches.
func runSpec(t *testing.T, text, ck string) []engine.Progress {
	t.Helper()
	ctx := context.Background()
	s, err := spec.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	q, err := engine.Open(ctx, s, engine.Options{Checkpoint: openStore(t, ck), Registry: stores.Registry(),
		Session: gateway.SessionOptions{Host: "test-host", PID: 1, Lease: time.Minute, Heartbeat: -1, ProcessAlive: func(int) bool { return false }}})
	if err != nil {
		t.Fatal(err)
	}
	var ps []engine.Progress
	if err := q.Run(ctx, engine.Trigger{AvailableNow: true}, func(p engine.Progress) { ps = append(ps, p) }); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return ps
}

// output returns the "p/i" of every row the files sink wrote under out
// (sorted).
func output(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	for _, r := range sinkRows[struct{ P, I int }](t, out) {
		got = append(got, fmt.Sprintf("%d/%02d", r.P, r.I))
	}
	slices.Sort(got)
	return got
}

// sinkRows decodes every row of the data files the files sink wrote under
// out (names starting with "_" or "." are its logs, not data) into R.
func sinkRows[R any](t *testing.T, out string) []R {
	t.Helper()
	var got []R
	for name, data := range tree(t, out) {
		if strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
			continue
		}
		for line := range bytes.Lines(data) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var r R
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatalf("%s: %q: %v", name, line, err)
			}
			got = append(got, r)
		}
	}
	return got
}

// records lists "p/i" for i in [from[p], to) of both partitions.
func records(from map[int32]int64, to int) []string {
	var out []string
	for p := range int32(2) {
		for i := int(from[p]); i < to; i++ {
			out = append(out, fmt.Sprintf("%d/%02d", p, i))
		}
	}
	return out
}

func readMigration(t *testing.T, dir, key string) lifecycle.MigrationRecord {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(key)))
	if err != nil {
		t.Fatal(err)
	}
	var rec lifecycle.MigrationRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestFreshStartKafka: a query runs on root A; A is fresh-started to B at
// given offsets, and B to C at a timestamp. Each new root's first batch
// starts exactly at its boundary (nothing before it, nothing skipped after
// it), the migration is recorded in both roots, the old root is unchanged
// but for the markers, and an archived root is refused.
func TestFreshStartKafka(t *testing.T) {
	ctx := context.Background()
	c, err := kfakeCluster(t)
	if err != nil {
		t.Fatal(err)
	}
	brokers := c.ListenAddrs()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	produceAt(t, brokers, "clicks", 0, 10, t0)
	dir := t.TempDir()
	ckA, ckB, ckC := filepath.Join(dir, "A"), filepath.Join(dir, "B"), filepath.Join(dir, "C")
	if ps := runQuery(t, brokers, ckA, filepath.Join(dir, "outA")); len(ps) == 0 {
		t.Fatal("root A ran no batch")
	}
	if got := output(t, filepath.Join(dir, "outA")); !slices.Equal(got, records(nil, 10)) {
		t.Fatalf("root A output %v", got)
	}
	produceAt(t, brokers, "clicks", 10, 15, t1)
	before := tree(t, ckA)

	boundary := map[int32]int64{0: 12, 1: 10}
	res, err := lifecycle.FreshStart(ctx, openStore(t, ckA), openStore(t, filepath.Join(dir, "archA")), openStore(t, ckB),
		lifecycle.FreshStartOptions{Source: ckA, Dest: filepath.Join(dir, "archA"), NewRoot: ckB,
			Start:     source.StartPoint{Kafka: map[string]map[int32]int64{"clicks": boundary}},
			Principal: lifecycle.Principal{ID: "alice", Kind: "housekeeping"}, Reason: "poison record", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) == 0 {
		t.Fatal("no steps left to the operator")
	}
	after := tree(t, ckA)
	for _, k := range []string{lifecycle.ArchivedKey, lifecycle.MigratedToKey} {
		if _, ok := after[k]; !ok {
			t.Fatalf("old root lacks %s", k)
		}
		delete(after, k)
	}
	if !maps.EqualFunc(before, after, bytes.Equal) {
		t.Fatal("the old root changed beyond the markers")
	}
	recA, recB := readMigration(t, ckA, lifecycle.MigratedToKey), readMigration(t, ckB, lifecycle.MigratedFromKey)
	if recA.OldRoot != ckA || recA.NewRoot != ckB || recA.ArchivedTo != filepath.Join(dir, "archA") || recA.Principal.ID != "alice" ||
		recA.Reason != "poison record" || !maps.Equal(recA.Boundary.Kafka["clicks"], boundary) || !recA.Time.Equal(now()) {
		t.Fatalf("migration record %+v", recA)
	}
	ja, _ := json.Marshal(recA)
	jb, _ := json.Marshal(recB)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("the roots record different migrations:\n%s\n%s", ja, jb)
	}
	if _, err := lifecycle.CheckNotArchived(ctx, openStore(t, ckA)); !errors.Is(err, lifecycle.ErrArchived) {
		t.Fatalf("archived root: %v, want ErrArchived", err)
	}

	ps := runQuery(t, brokers, ckB, filepath.Join(dir, "outB"))
	if len(ps) != 1 || ps[0].NumInputRows != 8 {
		t.Fatalf("root B: %d batches (%+v), want one of 8 rows", len(ps), ps)
	}
	if got, want := output(t, filepath.Join(dir, "outB")), records(boundary, 15); !slices.Equal(got, want) {
		t.Fatalf("root B output %v, want %v", got, want)
	}
	data, err := os.ReadFile(filepath.Join(ckB, "sources", "0", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if init, err := checkpoint.DecodeKafkaInitialOffsets(data); err != nil || !maps.Equal(init["clicks"], boundary) {
		t.Fatalf("root B initial offsets %v, %v", init, err)
	}

	// B to C from a timestamp: the first record at or after t1 is i=10.
	at, err := lifecycle.KafkaOffsetsAfter(ctx, brokers, "clicks", t1)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int32]int64{0: 10, 1: 10}; !maps.Equal(at, want) {
		t.Fatalf("offsets after %s: %v, want %v", t1, at, want)
	}
	_, err = lifecycle.FreshStart(ctx, openStore(t, ckB), openStore(t, filepath.Join(dir, "archB")), openStore(t, ckC),
		lifecycle.FreshStartOptions{Source: ckB, Dest: filepath.Join(dir, "archB"), NewRoot: ckC, FromTimestamp: &t1,
			Start:     source.StartPoint{Kafka: map[string]map[int32]int64{"clicks": at}},
			Principal: lifecycle.Principal{ID: "bob", Kind: "housekeeping"}, Reason: "replay the last hour", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if rec := readMigration(t, ckC, lifecycle.MigratedFromKey); rec.FromTimestamp == nil || !rec.FromTimestamp.Equal(t1) || rec.OldRoot != ckB {
		t.Fatalf("root C migration %+v", rec)
	}
	if got, want := output(t, runAndOut(t, brokers, ckC, filepath.Join(dir, "outC"))), records(at, 15); !slices.Equal(got, want) {
		t.Fatalf("root C output %v, want %v", got, want)
	}

	// A second fresh start of A, or one into a non-empty root, is refused.
	_, err = lifecycle.FreshStart(ctx, openStore(t, ckA), openStore(t, filepath.Join(dir, "archA2")), openStore(t, filepath.Join(dir, "D")),
		lifecycle.FreshStartOptions{Source: ckA, Dest: filepath.Join(dir, "archA2"), NewRoot: filepath.Join(dir, "D"),
			Start: source.StartPoint{Kafka: map[string]map[int32]int64{"clicks": boundary}}, Reason: "again", Now: now})
	if !errors.Is(err, gateway.ErrExists) {
		t.Fatalf("second fresh start: %v, want ErrExists", err)
	}
}

func runAndOut(t *testing.T, brokers []string, ck, out string) string {
	t.Helper()
	runQuery(t, brokers, ck, out)
	return out
}

// TestFreshStartStartFileOtherTopic: a start point for another topic is
// refused by the source's first run rather than silently ignored.
func TestFreshStartStartFileOtherTopic(t *testing.T) {
	ctx := context.Background()
	c, err := kfakeCluster(t)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ck := openStore(t, filepath.Join(dir, "ck"))
	put(t, ck, source.StartKey, `{"kafka":{"views":{"0":1}}}`)
	s, err := spec.Parse(fmt.Appendf(nil, "name: k\nsource: {kind: kafka, brokers: [%s], topic: clicks}\nsink: {kind: files, path: %s}\n",
		strings.Join(c.ListenAddrs(), ", "), filepath.Join(dir, "out")))
	if err != nil {
		t.Fatal(err)
	}
	q, err := engine.Open(ctx, s, engine.Options{Checkpoint: ck, Registry: stores.Registry(),
		Session: gateway.SessionOptions{Host: "test-host", PID: 1, Lease: time.Minute, Heartbeat: -1, ProcessAlive: func(int) bool { return false }}})
	if err == nil {
		q.Close(ctx)
		t.Fatal("a start point of another topic was accepted")
	}
	if !strings.Contains(err.Error(), "no offsets of topic clicks") {
		t.Fatalf("start point of another topic: %v", err)
	}
}

func TestFreshStartNeedsBoundaryAndReason(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, filepath.Join(dir, "x"))
	if _, err := lifecycle.FreshStart(ctx, st, st, st, lifecycle.FreshStartOptions{Reason: "r"}); err == nil || !strings.Contains(err.Error(), "boundary") {
		t.Fatalf("no boundary: %v", err)
	}
	if _, err := lifecycle.FreshStart(ctx, st, st, st, lifecycle.FreshStartOptions{
		Start: source.StartPoint{Kafka: map[string]map[int32]int64{"t": {0: 1}}}}); err == nil || !strings.Contains(err.Error(), "reason") {
		t.Fatalf("no reason: %v", err)
	}
}

func kfakeCluster(t *testing.T) (*kfake.Cluster, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "clicks"))
	if err == nil {
		t.Cleanup(c.Close)
	}
	return c, err
}

// TestFreshStartRetry: a fresh start that wrote the new root's start point
// and then failed (here: the archive destination is not empty) leaves the
// old root unmarked, and a retry with the same boundary goes on; another
// boundary is refused.
func TestFreshStartRetry(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "ck")
	if err := os.CopyFS(src, os.DirFS(sparkAgg)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dest, newRoot := openStore(t, filepath.Join(dir, "arch")), openStore(t, filepath.Join(dir, "new"))
	put(t, dest, "junk", "x")
	opts := lifecycle.FreshStartOptions{Source: src, Dest: filepath.Join(dir, "arch"), NewRoot: filepath.Join(dir, "new"),
		Start: source.StartPoint{Kafka: map[string]map[int32]int64{"clicks": {0: 3}}}, Reason: "r", Now: now}
	if _, err := lifecycle.FreshStart(ctx, openStore(t, src), dest, newRoot, opts); !errors.Is(err, lifecycle.ErrDestNotEmpty) {
		t.Fatalf("non-empty destination: %v", err)
	}
	if _, err := lifecycle.CheckNotArchived(ctx, openStore(t, src)); err != nil {
		t.Fatalf("a failed fresh start marked the old root: %v", err)
	}
	other := opts
	other.Start = source.StartPoint{Kafka: map[string]map[int32]int64{"clicks": {0: 4}}}
	dest2 := openStore(t, filepath.Join(dir, "arch2"))
	other.Dest = filepath.Join(dir, "arch2")
	if _, err := lifecycle.FreshStart(ctx, openStore(t, src), dest2, newRoot, other); !errors.Is(err, gateway.ErrExists) || !strings.Contains(err.Error(), "another start point") {
		t.Fatalf("retry with another boundary: %v", err)
	}
	opts.Dest = filepath.Join(dir, "arch2")
	if _, err := lifecycle.FreshStart(ctx, openStore(t, src), dest2, newRoot, opts); err != nil {
		t.Fatalf("retry: %v", err)
	}
	sp, err := source.ReadStart(ctx, newRoot)
	if err != nil || sp == nil || sp.Kafka["clicks"][0] != 3 {
		t.Fatalf("start point %+v, %v", sp, err)
	}
}

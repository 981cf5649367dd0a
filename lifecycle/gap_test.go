package lifecycle_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/lifecycle"
)

// kafkaTopic starts a kfake cluster with topic of parts partitions and
// n records in each.
func kafkaTopic(t *testing.T, topic string, parts int32, n int) (*kfake.Cluster, *kadm.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	produceTo(t, c.ListenAddrs(), topic, parts, n)
	return c, kadm.NewClient(cl)
}

func produceTo(t *testing.T, brokers []string, topic string, parts int32, n int) {
	t.Helper()
	var recs []*kgo.Record
	for p := range parts {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, `{"i":%d}`, i)})
		}
	}
	cl2, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	if err := cl2.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func put(t *testing.T, st gateway.Store, key, data string) {
	t.Helper()
	if _, err := st.Put(context.Background(), key, []byte(data), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
}

func topicID(t *testing.T, adm *kadm.Client, topic string) (cluster, id string) {
	t.Helper()
	md, err := adm.Metadata(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	td := md.Topics[topic]
	return md.Cluster, hex.EncodeToString(td.ID[:])
}

// kafkaCheckpoint writes a ckgate-style checkpoint: batch 0 committed at
// offsets0, batch 1 in flight up to offsets1 (when not empty), and a plan
// naming the topic's identity.
func kafkaCheckpoint(t *testing.T, adm *kadm.Client, topic, offsets0, offsets1 string) gateway.Store {
	t.Helper()
	st := memstore.New()
	cluster, id := topicID(t, adm, topic)
	put(t, st, "metadata", `{"id":"0b9e3c56-1111-4c4e-9d4f-000000000001"}`)
	put(t, st, "sources/0/0", string(checkpoint.EncodeKafkaInitialOffsets(map[string]map[int32]int64{topic: {0: 0, 1: 0}})))
	put(t, st, "offsets/0", "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1}\n"+offsets0)
	put(t, st, "commits/0", "v1\n{\"nextBatchWatermarkMs\":0}")
	if offsets1 != "" {
		put(t, st, "offsets/1", "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":2}\n"+offsets1)
	}
	plan, _ := json.Marshal(map[string]any{"version": 1, "name": "q", "partitions": 2,
		"source": map[string]string{"kind": "kafka", "cluster_id": cluster, "topic": topic, "topic_id": id}})
	put(t, st, checkpoint.PlanKey, string(plan))
	return st
}

func partition(t *testing.T, r *lifecycle.GapReport, p int32) lifecycle.PartitionGap {
	t.Helper()
	for _, s := range r.Sources {
		for _, pg := range s.Partitions {
			if pg.Partition == p {
				return pg
			}
		}
	}
	t.Fatalf("partition %d not in the report %+v", p, r)
	return lifecycle.PartitionGap{}
}

func TestGapKafkaOK(t *testing.T) {
	c, adm := kafkaTopic(t, "clicks", 2, 10)
	st := kafkaCheckpoint(t, adm, "clicks", `{"clicks":{"0":5,"1":5}}`, `{"clicks":{"0":10,"1":10}}`)
	r, err := lifecycle.Gap(context.Background(), st, lifecycle.GapOptions{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Problems != 0 {
		t.Fatalf("want ok, got %+v", r)
	}
	p := partition(t, r, 0)
	if p.Status != lifecycle.GapOK || p.Resume != 5 || p.Until == nil || *p.Until != 10 || p.Start != 0 || p.End != 10 {
		t.Fatalf("partition 0: %+v", p)
	}
	if r.ResumeFrom == nil || *r.ResumeFrom != 0 || r.InFlight == nil || *r.InFlight != 1 {
		t.Fatalf("resume %v in flight %v", r.ResumeFrom, r.InFlight)
	}
}

func TestGapKafkaExpired(t *testing.T) {
	c, adm := kafkaTopic(t, "clicks", 2, 10)
	st := kafkaCheckpoint(t, adm, "clicks", `{"clicks":{"0":5,"1":5}}`, "")
	ctx := context.Background()
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "clicks", Partition: 0, At: 8})
	resp, err := adm.DeleteRecords(ctx, offs)
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.Error(); err != nil {
		t.Fatal(err)
	}
	r, err := lifecycle.Gap(ctx, st, lifecycle.GapOptions{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	if r.OK() || r.Problems != 1 {
		t.Fatalf("want one problem, got %d", r.Problems)
	}
	p0 := partition(t, r, 0)
	if p0.Status != lifecycle.GapExpired || p0.Expired != 3 || p0.Start != 8 || p0.Resume != 5 {
		t.Fatalf("partition 0: %+v", p0)
	}
	if p1 := partition(t, r, 1); p1.Status != lifecycle.GapOK {
		t.Fatalf("partition 1: %+v", p1)
	}
	// Records expired only before the resume offset are no gap.
	offs = kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "clicks", Partition: 1, At: 5})
	if _, err := adm.DeleteRecords(ctx, offs); err != nil {
		t.Fatal(err)
	}
	r, err = lifecycle.Gap(ctx, st, lifecycle.GapOptions{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	if p1 := partition(t, r, 1); p1.Status != lifecycle.GapOK || p1.Start != 5 {
		t.Fatalf("partition 1 after expiring up to the resume offset: %+v", p1)
	}
}

func TestGapKafkaRecreatedTopic(t *testing.T) {
	c, adm := kafkaTopic(t, "clicks", 2, 10)
	st := kafkaCheckpoint(t, adm, "clicks", `{"clicks":{"0":5,"1":5}}`, "")
	ctx := context.Background()
	if _, err := adm.DeleteTopics(ctx, "clicks"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "clicks"); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produceTo(t, c.ListenAddrs(), "clicks", 1, 2) // partition 0 holds 2 records, partition 1 none
	r, err := lifecycle.Gap(ctx, st, lifecycle.GapOptions{Kafka: cl})
	if err != nil {
		t.Fatal(err)
	}
	if r.Problems != 2 {
		t.Fatalf("want 2 problems, got %+v", r)
	}
	for _, p := range []int32{0, 1} {
		pg := partition(t, r, p)
		if pg.Status != lifecycle.GapIdentityChanged || !contains(pg.Problems, lifecycle.GapAhead) {
			t.Fatalf("partition %d: %+v", p, pg)
		}
	}
	if pg := partition(t, r, 0); pg.Ahead != 3 || pg.End != 2 {
		t.Fatalf("partition 0: %+v", pg)
	}
	// Deleted for good: missing.
	if _, err := adm.DeleteTopics(ctx, "clicks"); err != nil {
		t.Fatal(err)
	}
	r, err = lifecycle.Gap(ctx, st, lifecycle.GapOptions{Kafka: cl})
	if err != nil {
		t.Fatal(err)
	}
	if pg := partition(t, r, 1); pg.Status != lifecycle.GapMissing || r.Problems != 2 {
		t.Fatalf("deleted topic: %+v", r)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestGapKafkaNeedsBrokers(t *testing.T) {
	_, adm := kafkaTopic(t, "clicks", 2, 1)
	st := kafkaCheckpoint(t, adm, "clicks", `{"clicks":{"0":1,"1":1}}`, "")
	if _, err := lifecycle.Gap(context.Background(), st, lifecycle.GapOptions{}); !errors.Is(err, lifecycle.ErrNoBrokers) {
		t.Fatalf("got %v, want ErrNoBrokers", err)
	}
}

func TestGapNotCheckpoint(t *testing.T) {
	if _, err := lifecycle.Gap(context.Background(), memstore.New(), lifecycle.GapOptions{}); !errors.Is(err, checkpoint.ErrNotCheckpoint) {
		t.Fatalf("got %v", err)
	}
}

// copyDir copies a directory of testdata into a fresh temporary one.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "ck")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Spark 2.4.3's Kafka checkpoint against a kfake topic of the same name:
// batch 0 committed at offset 3 of 5 partitions.
func TestGapSparkKafkaCheckpoint(t *testing.T) {
	const topic = "spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62"
	dir := copyDir(t, "../testdata/spark/kafka/checkpoint-version-2.4.3-kafka-include-headers-default")
	ctx := context.Background()
	st, err := stores.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer gateway.Close(st)
	c, adm := kafkaTopic(t, topic, 5, 6)
	r, err := lifecycle.Gap(ctx, st, lifecycle.GapOptions{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || len(r.Sources) != 1 || len(r.Sources[0].Partitions) != 5 {
		t.Fatalf("want 5 ok partitions, got %+v", r)
	}
	if s := r.Sources[0]; s.Identity != nil || !strings.Contains(s.Note, "identity is unknown") {
		t.Fatalf("a Spark checkpoint has no identity: %+v", s)
	}
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: topic, Partition: 4, At: 5})
	if _, err := adm.DeleteRecords(ctx, offs); err != nil {
		t.Fatal(err)
	}
	r, err = lifecycle.Gap(ctx, st, lifecycle.GapOptions{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	if p := partition(t, r, 4); p.Status != lifecycle.GapExpired || p.Expired != 2 || r.Problems != 1 {
		t.Fatalf("partition 4: %+v (problems %d)", p, r.Problems)
	}
}

// A file source: batch 0 (a.jsonl) committed, batch 1 (b.jsonl) in flight,
// log batch 2 (c.jsonl) recorded and not yet in a batch.
func TestGapFiles(t *testing.T) {
	ctx := context.Background()
	in := filepath.Join(t.TempDir(), "in")
	inStore := openStore(t, in)
	for _, n := range []string{"a.jsonl", "b.jsonl", "c.jsonl"} {
		put(t, inStore, n, `{"x":1}`+"\n")
	}
	base := "file://" + filepath.ToSlash(in)
	st := memstore.New()
	put(t, st, "metadata", `{"id":"0b9e3c56-1111-4c4e-9d4f-000000000002"}`)
	for i, n := range []string{"a.jsonl", "b.jsonl", "c.jsonl"} {
		data, err := checkpoint.EncodeFileSourceLog([]checkpoint.FileEntry{{Path: base + "/" + n, Timestamp: 1, BatchID: int64(i)}})
		if err != nil {
			t.Fatal(err)
		}
		put(t, st, fmt.Sprintf("sources/0/%d", i), string(data))
	}
	put(t, st, "offsets/0", "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1}\n"+checkpoint.EncodeFileSourceOffset(0))
	put(t, st, "commits/0", "v1\n{\"nextBatchWatermarkMs\":0}")
	put(t, st, "offsets/1", "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":2}\n"+checkpoint.EncodeFileSourceOffset(1))
	r, err := lifecycle.Gap(ctx, st, lifecycle.GapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Sources[0].Files == nil || r.Sources[0].Files.Needed != 2 {
		t.Fatalf("want ok with 2 files needed: %+v", r.Sources)
	}
	// The committed file may go; the in-flight and pending ones may not.
	for _, n := range []string{"a.jsonl", "b.jsonl", "c.jsonl"} {
		if err := inStore.Delete(ctx, n, gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
	r, err = lifecycle.Gap(ctx, st, lifecycle.GapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fg := r.Sources[0].Files
	if r.Problems != 2 || len(fg.Missing) != 2 || fg.Missing[0].Use != "in-flight" || !strings.HasSuffix(fg.Missing[0].Path, "/b.jsonl") ||
		fg.Missing[1].Use != "pending" || fg.Missing[1].LogBatch != 2 {
		t.Fatalf("missing %+v", fg.Missing)
	}
}

// A checkpoint written by ckgate's engine from a kfake topic: its plan
// names the topic id; re-creating the topic is identity-changed.
func TestGapEngineCheckpoint(t *testing.T) {
	ctx := context.Background()
	c, adm := kafkaTopic(t, "clicks", 2, 10)
	dir := t.TempDir()
	s, err := spec.Parse(fmt.Appendf(nil, "name: k\nsource: {kind: kafka, brokers: [%s], topic: clicks}\nsink: {kind: files, path: %s}\n",
		strings.Join(c.ListenAddrs(), ", "), filepath.Join(dir, "out")))
	if err != nil {
		t.Fatal(err)
	}
	cp := openStore(t, filepath.Join(dir, "ck"))
	q, err := engine.Open(ctx, s, engine.Options{Checkpoint: cp, Registry: stores.Registry(),
		Session: gateway.SessionOptions{Host: "test-host", PID: 1, Lease: time.Minute, Heartbeat: -1, ProcessAlive: func(int) bool { return false }}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Run(ctx, engine.Trigger{AvailableNow: true}, func(engine.Progress) {}); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := lifecycle.Gap(ctx, cp, lifecycle.GapOptions{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Sources[0].Identity["topic_id"] == "" || partition(t, r, 1).Resume != 10 {
		t.Fatalf("engine checkpoint: %+v", r)
	}
	if _, err := adm.DeleteTopics(ctx, "clicks"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "clicks"); err != nil {
		t.Fatal(err)
	}
	produceTo(t, c.ListenAddrs(), "clicks", 2, 10)
	r, err = lifecycle.Gap(ctx, cp, lifecycle.GapOptions{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	if p := partition(t, r, 0); p.Status != lifecycle.GapIdentityChanged || len(p.Problems) != 1 || r.Problems != 2 {
		t.Fatalf("re-created topic with as many records: %+v", p)
	}
}

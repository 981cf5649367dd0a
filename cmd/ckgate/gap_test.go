package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ckgate/ckgate/lifecycle"
)

// Spark 2.4.3's Kafka checkpoint (batch 0 committed at offset 3 of five
// partitions) against a kfake topic of the same name.
func TestGapCommandSparkKafka(t *testing.T) {
	const topic = "spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62"
	dir := filepath.Join(t.TempDir(), "ck")
	if err := os.CopyFS(dir, os.DirFS("../../testdata/spark/kafka/checkpoint-version-2.4.3-kafka-include-headers-default")); err != nil {
		t.Fatal(err)
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(5, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for p := range int32(5) {
		for range 6 {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("1")})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	brokers := strings.Join(c.ListenAddrs(), ",")
	o := Options{}
	ckgate(t, o, "", "gap", "--kafka", brokers, dir).want(t, 0, "VERDICT", "OK", "identity is unknown", "end offsets of committed batch 0")
	ckgate(t, o, "", "gap", dir).wantErr(t, 2, "--kafka")
	ckgate(t, o, "", "gap", "--kafka", brokers, t.TempDir()).wantErr(t, 2, "not a checkpoint")

	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: topic, Partition: 2, At: 5})
	if _, err := kadm.NewClient(cl).DeleteRecords(context.Background(), offs); err != nil {
		t.Fatal(err)
	}
	r := ckgate(t, o, "", "gap", "--kafka", brokers, "--format", "json", dir)
	r.want(t, 1)
	var rep lifecycle.GapReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Problems != 1 {
		t.Fatalf("problems %d", rep.Problems)
	}
	for _, p := range rep.Sources[0].Partitions {
		want := lifecycle.GapOK
		if p.Partition == 2 {
			want = lifecycle.GapExpired
		}
		if p.Status != want || p.Partition == 2 && p.Expired != 2 {
			t.Fatalf("partition %+v", p)
		}
	}
	ckgate(t, o, "", "gap", "--kafka", brokers, dir).want(t, 1, "GAP: 1", " gap ")

	// A plan naming another topic id: the topic was re-created.
	plan := `{"version":1,"source":{"kind":"kafka","topic":"` + topic + `","topic_id":"00000000000000000000000000000001"}}`
	if err := os.MkdirAll(filepath.Join(dir, "_ckgate"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_ckgate", "plan.json"), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	ckgate(t, o, "", "gap", "--kafka", brokers, dir).want(t, 1, "GAP: 5", "identity-changed,gap", "identity-changed ", "id 00000000000000000000000000000001")
}

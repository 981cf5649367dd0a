package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/gateway"
)

// kafkaCluster is an in-process Kafka (kfake) with topic "clicks" of three
// partitions holding the events, keyed by user.
func kafkaCluster(t *testing.T, files [][]event) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "clicks"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	produce(t, c, files)
	return c
}

func produce(t *testing.T, c *kfake.Cluster, files [][]event) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("clicks"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for _, f := range files {
		for _, e := range f {
			recs = append(recs, &kgo.Record{Key: []byte(e.User), Value: e.json()})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// With a watermark delay nothing reaches, no event is late whatever the
// batches are, so an update-mode aggregation ends with the value of every
// window over every event: a reference that does not depend on how the
// source split the stream.
const kafkaSpecTmpl = `
name: kafka
source: {kind: kafka, brokers: [%s], topic: clicks, max_offsets_per_trigger: %d}
event_time: ts
watermark: 1000000h
where: 'page != "health"'
operator: {kind: tumbling_window, keys: [uid], size: 5m, aggregates: [count, {sum: amount}]}
output_mode: update
sink: {kind: files, path: mem://out}
partitions: 2
`

func kafkaRef() refQuery {
	return refQuery{delay: 1000000 * 3600_000, size: 5 * 60_000, perBatch: 1 << 30, where: notHealth, intKey: true, update: true}
}

func TestKafkaSourceCrashAtEveryWrite(t *testing.T) {
	files := genEvents(5, 6, 30)
	want, _ := kafkaRef().run(files)
	c := kafkaCluster(t, files)
	specText := fmt.Sprintf(kafkaSpecTmpl, strings.Join(c.ListenAddrs(), ", "), 40)
	for k := 1; ; k += 2 {
		w := newWorld()
		faults := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Nth: k, Action: gateway.Crash})
		ps, err := runAll(context.Background(), mustSpec(t, specText), w.Options(faults, 1))
		fired := faults.Fired() > 0
		if !fired && err != nil {
			t.Fatal(err)
		}
		if fired {
			if _, err := runAll(context.Background(), mustSpec(t, specText), w.Options(nil, 2)); err != nil {
				t.Fatalf("crash at write %d: restart: %v", k, err)
			}
		}
		got := sinkResult(t, w, kafkaRef())
		if !slices.Equal(got, want) {
			t.Fatalf("crash at write %d: sink holds %d windows, reference %d", k, len(got), len(want))
		}
		if !fired {
			if len(ps) < 4 {
				t.Fatalf("only %d batches: max_offsets_per_trigger did not split the topic", len(ps))
			}
			if !strings.Contains(ps[0].Sources[0].EndOffset, `{"clicks":{"0":`) {
				t.Fatalf("end offset %s is not Spark's {topic:{partition:offset}}", ps[0].Sources[0].EndOffset)
			}
			return
		}
	}
}

// TestKafkaNewDataAndRecreatedTopic: a restart reads only new records;
// a topic deleted and created again under the same name is refused.
func TestKafkaNewDataAndRecreatedTopic(t *testing.T) {
	files := genEvents(6, 4, 20)
	c := kafkaCluster(t, files[:2])
	specText := fmt.Sprintf(kafkaSpecTmpl, strings.Join(c.ListenAddrs(), ", "), 0)
	w := newWorld()
	ps, err := runAll(context.Background(), mustSpec(t, specText), w.Options(nil, 1))
	if err != nil || len(ps) != 1 {
		for _, p := range ps {
			t.Logf("%d %s→%s %d rows nodata=%v", p.BatchID, p.Sources[0].StartOffset, p.Sources[0].EndOffset, p.NumInputRows, p.Ckgate.NoData)
		}
		t.Fatalf("first run: %d batches, %v", len(ps), err)
	}
	produce(t, c, files[2:])
	ps, err = runAll(context.Background(), mustSpec(t, specText), w.Options(nil, 2))
	if err != nil || len(ps) != 1 || ps[0].NumInputRows != int64(len(files[2])+len(files[3])) {
		t.Fatalf("second run: %+v, %v", ps, err)
	}
	want, _ := kafkaRef().run(files)
	if got := sinkResult(t, w, kafkaRef()); !slices.Equal(got, want) {
		t.Fatalf("sink holds %d windows, reference %d", len(got), len(want))
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TopicNames = []string{"clicks"}
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.Topic = kmsg.StringPtr("clicks")
	del.Topics = append(del.Topics, dt)
	if _, err := del.RequestWith(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
	cr := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "clicks", 3, 1
	cr.Topics = append(cr.Topics, ct)
	if _, err := cr.RequestWith(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
	_, err = runAll(context.Background(), mustSpec(t, specText), w.Options(nil, 3))
	if !errors.Is(err, engine.ErrIncompatible) || !strings.Contains(err.Error(), "topic_id") {
		t.Fatalf("re-created topic: %v, want ErrIncompatible naming the topic id", err)
	}
}

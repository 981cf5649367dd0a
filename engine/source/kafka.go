package source

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

// kafka reads one topic. Its partitions and their starting offsets are
// fixed by the first run in sources/<i>/0 (Spark's initial-offsets file:
// a 0x00 byte, "v1\n", {"topic":{"0":42}}), from the root's StartKey when a
// fresh start wrote one; a batch's end offsets are
// Spark's {"topic":{"partition":offset}}, and a batch reads, partition by
// partition in ascending order, the records from the start offsets up to
// (not including) the end offsets. Each record value is one JSON object.
// The identity is the cluster id, the topic name and the topic id, so a
// topic deleted and re-created under the same name is a different source.
// Records missing from a range (expired by retention) fail the batch, as
// Spark's failOnDataLoss does.
type kafka struct {
	env       Env
	topic     string
	brokers   []string
	limit     int64
	cl        *kgo.Client
	clusterID string
	topicID   string
	initial   map[int32]int64
}

func newKafka(ctx context.Context, s *spec.Spec, env Env) (Source, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Source.Brokers...), kgo.DisableClientMetrics())
	if err != nil {
		return nil, fmt.Errorf("source.brokers: %w", err)
	}
	k := &kafka{env: env, topic: s.Source.Topic, brokers: s.Source.Brokers, limit: s.Source.MaxOffsetsPerTrigger, cl: cl}
	if err := k.open(ctx, s.Source.StartingOffsets); err != nil {
		cl.Close()
		return nil, err
	}
	return k, nil
}

// open reads the topic's metadata and fixes (or reads) the initial offsets.
func (k *kafka) open(ctx context.Context, starting string) error {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(k.topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, k.cl)
	if err != nil {
		return fmt.Errorf("kafka metadata of topic %s: %w", k.topic, err)
	}
	if resp.ClusterID != nil {
		k.clusterID = *resp.ClusterID
	}
	if len(resp.Topics) != 1 {
		return fmt.Errorf("kafka topic %s: metadata holds %d topics", k.topic, len(resp.Topics))
	}
	mt := resp.Topics[0]
	if err := kerr.ErrorForCode(mt.ErrorCode); err != nil {
		return fmt.Errorf("kafka topic %s: %w", k.topic, err)
	}
	k.topicID = hex.EncodeToString(mt.TopicID[:])
	var parts []int32
	for _, p := range mt.Partitions {
		parts = append(parts, p.Partition)
	}
	slices.Sort(parts)
	key := k.env.Dir + "/0"
	data, _, err := gateway.GetBounded(ctx, k.env.Checkpoint, key, 0)
	if errors.Is(err, gateway.ErrNotFound) {
		ts := int64(-2) // earliest
		if starting == "latest" {
			ts = -1
		}
		offs, err := k.listOffsets(ctx, parts, ts)
		if err != nil {
			return err
		}
		if err := k.fromStart(ctx, parts, offs); err != nil {
			return err
		}
		e, err := k.env.CreateEntry(ctx, key, checkpoint.EncodeKafkaInitialOffsets(map[string]map[int32]int64{k.topic: offs}))
		if err != nil {
			return fmt.Errorf("kafka initial offsets: %w", err)
		}
		data = e.Data
	} else if err != nil {
		return fmt.Errorf("kafka initial offsets: %w", err)
	}
	m, err := checkpoint.DecodeKafkaInitialOffsets(data)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	k.initial = m[k.topic]
	if k.initial == nil {
		return fmt.Errorf("%s: no offsets of topic %s (the checkpoint reads another topic)", key, k.topic)
	}
	return nil
}

// fromStart overrides offs with the start point of a fresh start
// (StartKey), if the root has one: its partitions start exactly there; a
// partition it does not name keeps offs (the earliest or latest).
func (k *kafka) fromStart(ctx context.Context, parts []int32, offs map[int32]int64) error {
	sp, err := ReadStart(ctx, k.env.Checkpoint)
	if err != nil || sp == nil {
		return err
	}
	if len(sp.Kafka) == 0 {
		return fmt.Errorf("%s: no Kafka offsets (the source reads topic %s)", StartKey, k.topic)
	}
	start, ok := sp.Kafka[k.topic]
	if !ok {
		return fmt.Errorf("%s: no offsets of topic %s (the new root was started for another topic)", StartKey, k.topic)
	}
	for p, o := range start {
		if !slices.Contains(parts, p) {
			return fmt.Errorf("%s: topic %s has no partition %d", StartKey, k.topic, p)
		}
		if o < 0 {
			return fmt.Errorf("%s: topic %s partition %d: offset %d", StartKey, k.topic, p, o)
		}
		offs[p] = o
	}
	return nil
}

// listOffsets returns the earliest (-2) or latest (-1) offset of parts.
func (k *kafka) listOffsets(ctx context.Context, parts []int32, ts int64) (map[int32]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = k.topic
	for _, p := range parts {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, ts
		t.Partitions = append(t.Partitions, rp)
	}
	req.Topics = append(req.Topics, t)
	shards := k.cl.RequestSharded(ctx, req)
	out := map[int32]int64{}
	for _, sh := range shards {
		if sh.Err != nil {
			return nil, fmt.Errorf("kafka list offsets of %s: %w", k.topic, sh.Err)
		}
		for _, rt := range sh.Resp.(*kmsg.ListOffsetsResponse).Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					return nil, fmt.Errorf("kafka list offsets of %s partition %d: %w", k.topic, rp.Partition, err)
				}
				out[rp.Partition] = rp.Offset
			}
		}
	}
	for _, p := range parts {
		if _, ok := out[p]; !ok {
			return nil, fmt.Errorf("kafka list offsets of %s: no answer for partition %d", k.topic, p)
		}
	}
	return out, nil
}

func (k *kafka) Identity() map[string]string {
	return map[string]string{"kind": spec.SourceKafka, "cluster_id": k.clusterID, "topic": k.topic, "topic_id": k.topicID}
}

func (k *kafka) Close() error {
	k.cl.Close()
	return nil
}

// offsets decodes Spark's offset JSON ("" is the initial offsets).
func (k *kafka) offsets(s string) (map[int32]int64, error) {
	if s == "" {
		return maps.Clone(k.initial), nil
	}
	m, err := checkpoint.DecodeKafkaOffsets(s)
	if err != nil {
		return nil, fmt.Errorf("kafka offset %q: %w", s, err)
	}
	offs, ok := m[k.topic]
	if !ok {
		return nil, fmt.Errorf("kafka offset %q: no offsets of topic %s", s, k.topic)
	}
	return offs, nil
}

func (k *kafka) encode(offs map[int32]int64) string {
	return checkpoint.EncodeKafkaOffsets(map[string]map[int32]int64{k.topic: offs})
}

func (k *kafka) Next(ctx context.Context, start string) (string, error) {
	from, err := k.offsets(start)
	if err != nil {
		return "", err
	}
	parts := slices.Sorted(maps.Keys(from))
	latest, err := k.listOffsets(ctx, parts, -1)
	if err != nil {
		return "", err
	}
	end := map[int32]int64{}
	var avail int64
	for _, p := range parts {
		end[p] = max(from[p], latest[p])
		avail += end[p] - from[p]
	}
	if avail == 0 {
		return start, nil
	}
	if k.limit > 0 && avail > k.limit {
		// Spark's rateLimit: each partition gets its share of the limit
		left := k.limit
		for _, p := range parts {
			n := (end[p] - from[p]) * k.limit / avail
			end[p] = from[p] + n
			left -= n
		}
		for _, p := range parts { // the rounding remainder, in partition order
			if left == 0 {
				break
			}
			if room := latest[p] - end[p]; room > 0 {
				n := min(room, left)
				end[p] += n
				left -= n
			}
		}
	}
	if start != "" && maps.Equal(end, from) {
		return start, nil
	}
	return k.encode(end), nil
}

func (k *kafka) Read(ctx context.Context, start, end string, emit func(*row.Row) error) error {
	from, err := k.offsets(start)
	if err != nil {
		return err
	}
	to, err := k.offsets(end)
	if err != nil {
		return err
	}
	want := map[int32]kgo.Offset{}
	for p, e := range to {
		if e > from[p] {
			want[p] = kgo.NewOffset().At(from[p])
		}
	}
	if len(want) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.brokers...), kgo.DisableClientMetrics(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{k.topic: want}),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		return fmt.Errorf("kafka consumer: %w", err)
	}
	defer cl.Close()
	got := map[int32][]*kgo.Record{}
	next := map[int32]int64{}
	for p := range want {
		next[p] = from[p]
	}
	for len(next) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, fe := range fs.Errors() {
			return fmt.Errorf("kafka fetch %s partition %d: %w", fe.Topic, fe.Partition, fe.Err)
		}
		var lost error
		fs.EachRecord(func(r *kgo.Record) {
			n, ok := next[r.Partition]
			if !ok || r.Offset < n {
				return
			}
			if r.Offset > n && lost == nil && len(got[r.Partition]) == 0 {
				lost = fmt.Errorf("kafka %s partition %d: offsets %d to %d are gone (expired by retention?): the batch cannot be read again",
					k.topic, r.Partition, n, r.Offset-1)
			}
			if r.Offset >= to[r.Partition] {
				delete(next, r.Partition)
				return
			}
			got[r.Partition] = append(got[r.Partition], r)
			next[r.Partition] = r.Offset + 1
			if r.Offset+1 >= to[r.Partition] {
				delete(next, r.Partition)
			}
		})
		if lost != nil {
			return lost
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		for _, r := range got[p] {
			rw, err := row.ParseJSON(bytes.TrimSpace(r.Value))
			if err != nil {
				return fmt.Errorf("kafka %s partition %d offset %d: %w", k.topic, p, r.Offset, err)
			}
			if err := emit(&rw); err != nil {
				return fmt.Errorf("kafka %s partition %d offset %d: %w", k.topic, p, r.Offset, err)
			}
		}
	}
	return nil
}

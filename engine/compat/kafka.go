package compat

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KafkaBrokers returns the brokers a proposed Kafka source names: the
// "brokers" option (a ckgate spec) or Spark's "kafka.bootstrap.servers".
func KafkaBrokers(s Source) []string {
	for _, k := range []string{"brokers", "kafka.bootstrap.servers"} {
		if v := s.Options[k]; v != "" {
			var out []string
			for _, b := range strings.Split(v, ",") {
				if b = strings.TrimSpace(b); b != "" {
					out = append(out, b)
				}
			}
			return out
		}
	}
	return nil
}

// ResolveKafka asks the brokers of every Kafka source of p that names
// them for the cluster id and the ids of its topics, and fills in those
// the plan does not give: a topic deleted and re-created under the same
// name has another id, and is another source.
func ResolveKafka(ctx context.Context, p *Plan) error {
	for i := range p.Sources {
		s := &p.Sources[i]
		if normKind(s.Kind) != "kafka" || len(s.Topics) == 0 {
			continue
		}
		brokers := KafkaBrokers(*s)
		if len(brokers) == 0 {
			return fmt.Errorf("sources[%d]: no brokers to resolve topic ids (options.kafka.bootstrap.servers)", i)
		}
		cluster, ids, err := kafkaIDs(ctx, brokers, s.Topics)
		if err != nil {
			return fmt.Errorf("sources[%d]: %w", i, err)
		}
		if s.ClusterID == "" {
			s.ClusterID = cluster
		}
		if s.TopicIDs == nil {
			s.TopicIDs = map[string]string{}
		}
		for t, id := range ids {
			if s.TopicIDs[t] == "" {
				s.TopicIDs[t] = id
			}
		}
	}
	return nil
}

// kafkaIDs reads the cluster id and the topic ids (as ckgate's Kafka
// source records them: hex) from a Metadata request.
func kafkaIDs(ctx context.Context, brokers, topics []string) (string, map[string]string, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DisableClientMetrics())
	if err != nil {
		return "", nil, fmt.Errorf("kafka brokers %s: %w", strings.Join(brokers, ","), err)
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return "", nil, fmt.Errorf("kafka metadata of %s: %w", strings.Join(topics, ","), err)
	}
	cluster := ""
	if resp.ClusterID != nil {
		cluster = *resp.ClusterID
	}
	ids := map[string]string{}
	for _, mt := range resp.Topics {
		name := ""
		if mt.Topic != nil {
			name = *mt.Topic
		}
		if err := kerr.ErrorForCode(mt.ErrorCode); err != nil {
			return "", nil, fmt.Errorf("kafka topic %s: %w", name, err)
		}
		ids[name] = hex.EncodeToString(mt.TopicID[:])
	}
	return cluster, ids, nil
}

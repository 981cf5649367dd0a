package lifecycle

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/source"
	"github.com/ckgate/ckgate/gateway"
)

// StartRequest is the boundary an operator gives a fresh start: offsets
// (Offsets) or a time (Timestamp), exactly one of them.
type StartRequest struct {
	// Offsets is JSON: Spark's Kafka offsets {"topic":{"partition":offset}},
	// or a files boundary (FilesFrom).
	Offsets string
	// Timestamp: for Kafka, each partition's first record at or after it
	// (asked of Brokers); for files, those modified at or after it are new.
	Timestamp *time.Time
	// Brokers (HOST:PORT) answer a Kafka Timestamp.
	Brokers []string
	// Topic, for a Kafka Timestamp, overrides the topic the plan records.
	Topic string
}

// ResolveStart turns req into the start point of the new root of the
// checkpoint at src. The source is the one src's plan records; a Spark
// checkpoint records none, and then the shape of req.Offsets says which.
//
// A request that does not fit the checkpoint (offsets of another topic, a
// time without brokers, a Kafka boundary for a files source, …) is
// ErrBadBoundary; a plan that does not read or decode is returned as
// PlannedSource returns it (checkpoint.ErrCorrupt for a corrupt one); a
// Kafka lookup that fails, as KafkaOffsetsAfter returns it.
func ResolveStart(ctx context.Context, src gateway.Store, req StartRequest) (source.StartPoint, error) {
	if (req.Offsets == "") == (req.Timestamp == nil) {
		return source.StartPoint{}, fmt.Errorf("%w: give offsets or a time, exactly one", ErrBadBoundary)
	}
	kind, fields, err := PlannedSource(ctx, src)
	if err != nil {
		return source.StartPoint{}, err
	}
	if kind == "files" {
		return filesStart(ctx, src, req)
	}
	if req.Offsets != "" && kind == "" {
		if _, err := ParseFilesBoundary(req.Offsets); err == nil {
			return filesStart(ctx, src, req) // a files boundary says what a Spark checkpoint does not
		}
	}
	if kind != "" && kind != "kafka" {
		return source.StartPoint{}, fmt.Errorf("%w: a fresh-start boundary is for a Kafka or files source; the checkpoint reads a %s source", ErrBadBoundary, kind)
	}
	topic := fields["topic"]
	if req.Offsets != "" {
		m, err := checkpoint.DecodeKafkaOffsets(req.Offsets)
		if err != nil || len(m) == 0 {
			return source.StartPoint{}, fmt.Errorf("%w: offsets %q: want Spark's Kafka offsets {\"topic\":{\"partition\":offset}} (%v)", ErrBadBoundary, truncate(req.Offsets, 80), err)
		}
		if topic != "" {
			if _, ok := m[topic]; !ok || len(m) != 1 {
				return source.StartPoint{}, fmt.Errorf("%w: the offsets name %s; the checkpoint reads topic %s", ErrBadBoundary, strings.Join(slices.Sorted(maps.Keys(m)), ", "), topic)
			}
		}
		return source.StartPoint{Kafka: m}, nil
	}
	if len(req.Brokers) == 0 {
		return source.StartPoint{}, fmt.Errorf("%w: a Kafka boundary in time needs brokers (HOST:PORT)", ErrBadBoundary)
	}
	if req.Topic != "" {
		topic = req.Topic
	}
	if topic == "" {
		return source.StartPoint{}, fmt.Errorf("%w: the checkpoint records no Kafka topic (%s): give the topic", ErrBadBoundary, checkpoint.PlanKey)
	}
	offs, err := KafkaOffsetsAfter(ctx, req.Brokers, topic, *req.Timestamp)
	if err != nil {
		return source.StartPoint{}, err
	}
	return source.StartPoint{Kafka: map[string]map[int32]int64{topic: offs}}, nil
}

// filesStart is ResolveStart for a files source.
func filesStart(ctx context.Context, src gateway.Store, req StartRequest) (source.StartPoint, error) {
	if len(req.Brokers) > 0 || req.Topic != "" {
		return source.StartPoint{}, fmt.Errorf("%w: brokers and a topic are for a Kafka source; the checkpoint reads a files source", ErrBadBoundary)
	}
	var from FilesFrom
	if req.Offsets != "" {
		f, err := ParseFilesBoundary(req.Offsets)
		if err != nil {
			return source.StartPoint{}, fmt.Errorf("the checkpoint reads a files source: %w", err)
		}
		from = f
	}
	fs, err := FilesBoundary(ctx, src, from, req.Timestamp)
	if err != nil {
		return source.StartPoint{}, err
	}
	return source.StartPoint{Files: fs}, nil
}

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

// BoundaryError is an ErrBadBoundary that names the part of the
// StartRequest at fault, so that a caller can name its own input (a flag,
// a field): Field is "Offsets", "Timestamp", "Brokers" or "Topic".
type BoundaryError struct {
	Field string
	Err   error // wraps ErrBadBoundary
}

func (e *BoundaryError) Error() string { return e.Err.Error() }
func (e *BoundaryError) Unwrap() error { return e.Err }

// badStart is a BoundaryError of field.
func badStart(field, format string, a ...any) error {
	return &BoundaryError{Field: field, Err: fmt.Errorf("%w: %s", ErrBadBoundary, fmt.Sprintf(format, a...))}
}

// given is the field of req that holds its boundary.
func (req StartRequest) given() string {
	if req.Offsets != "" {
		return "Offsets"
	}
	return "Timestamp"
}

// ResolveStart turns req into the start point of the new root of the
// checkpoint at src. The source is the one src's plan records; a Spark
// checkpoint records none, and then the shape of req.Offsets says which.
//
// A request that does not fit the checkpoint (offsets of another topic, a
// time without brokers, a Kafka boundary for a files source, …) is
// ErrBadBoundary (a BoundaryError where one part of req is at fault); a plan that does not read or decode is returned as
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
		return source.StartPoint{}, badStart(req.given(), "a fresh-start boundary is for a Kafka or files source; the checkpoint reads a %s source", kind)
	}
	topic := fields["topic"]
	if req.Offsets != "" {
		m, err := checkpoint.DecodeKafkaOffsets(req.Offsets)
		if err != nil || len(m) == 0 {
			return source.StartPoint{}, badStart("Offsets", "%q: want Spark's Kafka offsets {\"topic\":{\"partition\":offset}} (%v)", truncate(req.Offsets, 80), err)
		}
		if topic != "" {
			if _, ok := m[topic]; !ok || len(m) != 1 {
				return source.StartPoint{}, badStart("Offsets", "the offsets name %s; the checkpoint reads topic %s", strings.Join(slices.Sorted(maps.Keys(m)), ", "), topic)
			}
		}
		return source.StartPoint{Kafka: m}, nil
	}
	if len(req.Brokers) == 0 {
		return source.StartPoint{}, badStart("Brokers", "a Kafka boundary in time needs the brokers (HOST:PORT) to ask")
	}
	if req.Topic != "" {
		topic = req.Topic
	}
	if topic == "" {
		return source.StartPoint{}, badStart("Topic", "the checkpoint records no Kafka topic (%s): give the topic", checkpoint.PlanKey)
	}
	offs, err := KafkaOffsetsAfter(ctx, req.Brokers, topic, *req.Timestamp)
	if err != nil {
		return source.StartPoint{}, err
	}
	return source.StartPoint{Kafka: map[string]map[int32]int64{topic: offs}}, nil
}

// filesStart is ResolveStart for a files source.
func filesStart(ctx context.Context, src gateway.Store, req StartRequest) (source.StartPoint, error) {
	if len(req.Brokers) > 0 {
		return source.StartPoint{}, badStart("Brokers", "brokers are for a Kafka source; the checkpoint reads a files source")
	}
	if req.Topic != "" {
		return source.StartPoint{}, badStart("Topic", "a topic is for a Kafka source; the checkpoint reads a files source")
	}
	var from FilesFrom
	if req.Offsets != "" {
		f, err := ParseFilesBoundary(req.Offsets)
		if err != nil {
			return source.StartPoint{}, &BoundaryError{Field: "Offsets", Err: fmt.Errorf("the checkpoint reads a files source: %w", err)}
		}
		from = f
	}
	fs, err := FilesBoundary(ctx, src, from, req.Timestamp)
	if err != nil {
		return source.StartPoint{}, err
	}
	return source.StartPoint{Files: fs}, nil
}

package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Source offset kinds reported by ParseSourceOffset.
const (
	OffsetNone    = "none"    // "-": no offset yet
	OffsetLong    = "long"    // LongOffset: a bare number (memory, socket, rate, file source in Spark 2.1)
	OffsetFile    = "file"    // FileStreamSourceOffset {"logOffset":N}
	OffsetKafka   = "kafka"   // KafkaSourceOffset {"topic":{"partition":offset}}
	OffsetRate    = "rate"    // rate source {"0":{"value":N,"runTimeMs":T}} or {"offset":N,"timestamp":T}
	OffsetUnknown = "unknown" // any other JSON (DSv2 sources define their own)
)

// KafkaPartitionOffset is one topic partition's offset.
type KafkaPartitionOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// RateOffset is one rate-source position.
type RateOffset struct {
	Partition *int32 `json:"partition,omitempty"`
	Value     int64  `json:"value"`
	RunTimeMs int64  `json:"run_time_ms"`
}

// SourceOffset is a decoded offset of one source in one batch.
type SourceOffset struct {
	Kind      string                 `json:"kind"`
	JSON      string                 `json:"json,omitempty"`
	Value     *int64                 `json:"value,omitempty"`
	LogOffset *int64                 `json:"log_offset,omitempty"`
	Kafka     []KafkaPartitionOffset `json:"kafka,omitempty"`
	Rate      []RateOffset           `json:"rate,omitempty"`
	Delta     *DeltaSourceOffset     `json:"delta,omitempty"`
	Iceberg   *IcebergSourceOffset   `json:"iceberg,omitempty"`
}

// ParseSourceOffset classifies an offset entry and decodes the forms it
// knows. It never fails: what it cannot decode is kind "unknown".
func ParseSourceOffset(e OffsetEntry) SourceOffset {
	if !e.Present {
		return SourceOffset{Kind: OffsetNone}
	}
	s := strings.TrimSpace(e.JSON)
	so := SourceOffset{Kind: OffsetUnknown, JSON: e.JSON}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		so.Kind, so.Value = OffsetLong, &n
		return so
	}
	if n, err := DecodeFileSourceOffset(s); err == nil {
		so.Kind, so.LogOffset = OffsetFile, &n
		return so
	}
	if r, err := decodeRateOffset(s); err == nil {
		so.Kind, so.Rate = OffsetRate, r
		return so
	}
	if d, err := DecodeDeltaSourceOffset(s); err == nil {
		so.Kind, so.Delta = OffsetDelta, &d
		return so
	}
	if o, err := DecodeIcebergSourceOffset(s); err == nil {
		so.Kind, so.Iceberg = OffsetIceberg, &o
		return so
	}
	if k, err := DecodeKafkaOffsets(s); err == nil {
		so.Kind = OffsetKafka
		for _, t := range slices.Sorted(maps.Keys(k)) {
			for _, p := range slices.Sorted(maps.Keys(k[t])) {
				so.Kafka = append(so.Kafka, KafkaPartitionOffset{Topic: t, Partition: p, Offset: k[t][p]})
			}
		}
	}
	return so
}

// decodeObject decodes a JSON object keeping numbers exact.
func decodeObject(s string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, corruptf("offset JSON: %v", err)
	}
	if dec.More() || m == nil {
		return nil, corruptf("offset JSON is not one object")
	}
	return m, nil
}

func jsonInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

// DecodeFileSourceOffset decodes a file source offset: {"logOffset":N}, or
// the bare long Spark 2.1.0 wrote.
func DecodeFileSourceOffset(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < -1 || n > MaxBatchID {
			return 0, fmt.Errorf("%w: %w: file source log offset %d (want -1..%d)", ErrCorrupt, ErrBatchRange, n, MaxBatchID)
		}
		return n, nil
	}
	m, err := decodeObject(s)
	if err != nil {
		return 0, err
	}
	n, ok := jsonInt(m["logOffset"])
	if !ok || len(m) != 1 {
		return 0, corruptf("file source offset is not {\"logOffset\":N}")
	}
	if n < -1 || n > MaxBatchID {
		return 0, fmt.Errorf("%w: %w: file source log offset %d (want -1..%d)", ErrCorrupt, ErrBatchRange, n, MaxBatchID)
	}
	return n, nil
}

// EncodeFileSourceOffset returns {"logOffset":N}.
func EncodeFileSourceOffset(n int64) string {
	return `{"logOffset":` + strconv.FormatInt(n, 10) + `}`
}

// DecodeKafkaOffsets decodes Kafka partition offsets
// {"topic":{"0":42,"1":7},…}.
func DecodeKafkaOffsets(s string) (map[string]map[int32]int64, error) {
	m, err := decodeObject(s)
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, corruptf("kafka offsets: no topic")
	}
	out := make(map[string]map[int32]int64, len(m))
	for topic, v := range m {
		parts, ok := v.(map[string]any)
		if !ok {
			return nil, corruptf("kafka offsets of topic %q are not an object", topic)
		}
		po := make(map[int32]int64, len(parts))
		for p, o := range parts {
			pn, err := strconv.ParseInt(p, 10, 32)
			if err != nil {
				return nil, corruptf("kafka partition %q of topic %q is not a number", p, topic)
			}
			on, ok := jsonInt(o)
			if !ok {
				return nil, corruptf("kafka offset of %s-%s is not a long", topic, p)
			}
			po[int32(pn)] = on
		}
		out[topic] = po
	}
	return out, nil
}

// EncodeKafkaOffsets returns the JSON Spark's KafkaSourceOffset writes,
// with topics and partitions sorted.
func EncodeKafkaOffsets(m map[string]map[int32]int64) string {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, t := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte(',')
		}
		tb, _ := json.Marshal(t)
		b.Write(tb)
		b.WriteString(":{")
		for j, p := range slices.Sorted(maps.Keys(m[t])) {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + strconv.FormatInt(int64(p), 10) + `":` + strconv.FormatInt(m[t][p], 10))
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.String()
}

// decodeRateOffset decodes the rate sources' offsets: the continuous
// RateStreamOffset {"<partition>":{"value":N,"runTimeMs":T}} and the
// rate-micro-batch {"offset":N,"timestamp":T}.
func decodeRateOffset(s string) ([]RateOffset, error) {
	m, err := decodeObject(s)
	if err != nil {
		return nil, err
	}
	if len(m) == 2 {
		o, ok1 := jsonInt(m["offset"])
		t, ok2 := jsonInt(m["timestamp"])
		if ok1 && ok2 {
			return []RateOffset{{Value: o, RunTimeMs: t}}, nil
		}
	}
	if len(m) == 0 {
		return nil, corruptf("rate offset: empty")
	}
	var out []RateOffset
	for _, p := range slices.Sorted(maps.Keys(m)) {
		pn, err := strconv.ParseInt(p, 10, 32)
		if err != nil {
			return nil, corruptf("rate offset: partition %q", p)
		}
		inner, ok := m[p].(map[string]any)
		if !ok || len(inner) != 2 {
			return nil, corruptf("rate offset: partition %q", p)
		}
		v, ok1 := jsonInt(inner["value"])
		t, ok2 := jsonInt(inner["runTimeMs"])
		if !ok1 || !ok2 {
			return nil, corruptf("rate offset: partition %q", p)
		}
		p32 := int32(pn)
		out = append(out, RateOffset{Partition: &p32, Value: v, RunTimeMs: t})
	}
	slices.SortFunc(out, func(a, b RateOffset) int { return int(*a.Partition) - int(*b.Partition) })
	return out, nil
}

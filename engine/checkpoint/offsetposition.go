package checkpoint

import (
	"encoding/json"
	"strings"
)

// OffsetPosition is a source offset as one number that grows as the
// source advances, so that the difference between two batches is how far
// the source moved: a long offset's value, a file source's log offset,
// the sum of a Kafka source's partition offsets, the sum of a rate
// source's values, a Delta source's reservoirVersion. ok is false for a
// form it does not know (or no offset yet).
func OffsetPosition(o SourceOffset) (pos int64, kind string, ok bool) {
	switch o.Kind {
	case OffsetLong:
		if o.Value != nil {
			return *o.Value, o.Kind, true
		}
	case OffsetFile:
		if o.LogOffset != nil {
			return *o.LogOffset, o.Kind, true
		}
	case OffsetKafka:
		var sum int64
		for _, p := range o.Kafka {
			sum += p.Offset
		}
		if len(o.Kafka) > 0 {
			return sum, o.Kind, true
		}
	case OffsetRate:
		var sum int64
		for _, p := range o.Rate {
			sum += p.Value
		}
		if len(o.Rate) > 0 {
			return sum, o.Kind, true
		}
	case OffsetUnknown:
		// Delta's DeltaSourceOffset: {"sourceVersion":1,"reservoirId":…,"reservoirVersion":N,"index":I,…}
		if !strings.Contains(o.JSON, `"reservoirVersion"`) {
			return 0, "", false
		}
		var d struct {
			ReservoirID      string `json:"reservoirId"`
			ReservoirVersion *int64 `json:"reservoirVersion"`
		}
		if json.Unmarshal([]byte(o.JSON), &d) == nil && d.ReservoirVersion != nil {
			return *d.ReservoirVersion, "delta", true
		}
	}
	return 0, "", false
}

package checkpoint

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
			pos, ok = *o.Value, true
		}
	case OffsetFile:
		if o.LogOffset != nil {
			pos, ok = *o.LogOffset, true
		}
	case OffsetKafka:
		pos, ok = sumOf(o.Kafka, func(p KafkaPartitionOffset) int64 { return p.Offset })
	case OffsetRate:
		pos, ok = sumOf(o.Rate, func(p RateOffset) int64 { return p.Value })
	case OffsetDelta:
		if o.Delta != nil {
			pos, ok = o.Delta.ReservoirVersion, true
		}
	}
	if !ok {
		return 0, "", false
	}
	return pos, o.Kind, true
}

// sumOf sums the position of every partition of a source offset; ok is
// false when there is none (no offset yet).
func sumOf[P any](parts []P, position func(P) int64) (sum int64, ok bool) {
	for _, p := range parts {
		sum += position(p)
	}
	return sum, len(parts) > 0
}

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
	case OffsetDelta:
		if o.Delta != nil {
			return o.Delta.ReservoirVersion, o.Kind, true
		}
	}
	return 0, "", false
}

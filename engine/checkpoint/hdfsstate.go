package checkpoint

// HDFSBackedStateStoreProvider files: <v>.delta and <v>.snapshot, a
// compressed length-prefixed record stream (see countKVRecords).

// CountDelta decompresses an HDFS-provider delta file with codec (the
// offset-log conf value; "" = lz4) and counts its puts and deletes. limit
// caps the decompressed size (<= 0: none).
func CountDelta(codec string, data []byte, limit int64) (RecordCounts, error) {
	raw, err := decompressState(codec, data, limit)
	if err != nil {
		return RecordCounts{}, err
	}
	return countKVRecords(raw, true)
}

// CountSnapshot is CountDelta for a snapshot file, which holds puts only.
func CountSnapshot(codec string, data []byte, limit int64) (RecordCounts, error) {
	raw, err := decompressState(codec, data, limit)
	if err != nil {
		return RecordCounts{}, err
	}
	return countKVRecords(raw, false)
}

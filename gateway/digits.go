package gateway

// AllDigits reports whether s is one or more ASCII digits: the name of a
// log entry's batch (offsets/N, commits/N, sources/S/N, _spark_metadata/N,
// before any ".compact"), a version or a partition number. Spark reads any
// such name as a number, zero-padded or longer than an int64 holds, so the
// guard, the S3 front door and the checkpoint reader all ask this one
// question about a name; whether the number is in range is the reader's
// question (checkpoint.ParseBatchID).
func AllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

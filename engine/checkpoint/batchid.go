package checkpoint

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/ckgate/ckgate/gateway"
)

// MaxBatchID is the largest batch id ckgate reads or writes: 2^62. Spark's
// batch ids are Longs, but an id near math.MaxInt64 leaves no room for the
// next batch (id+1), a state version (batch+1) or the sum of two ids, and a
// loop up to it would never end. A log file named by a bigger number is
// refused with ErrBatchRange (Inspect reports it as FindingBatchOutOfRange)
// instead of being read as a batch.
const MaxBatchID int64 = 1 << 62

// ErrBatchRange: a file is named by a batch id beyond MaxBatchID.
var ErrBatchRange = errors.New("batch id out of range")

// errNotBatchID: a name that is not a decimal number at all.
var errNotBatchID = errors.New("not a batch id")

// ParseBatchID parses a batch id written as decimal digits. A number beyond
// MaxBatchID (or beyond int64) is ErrBatchRange; any other name that is not
// digits only is an error that is not.
func ParseBatchID(s string) (int64, error) {
	if !gateway.AllDigits(s) {
		return 0, errNotBatchID
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id > MaxBatchID {
		return 0, fmt.Errorf("%w (the largest accepted is %d)", ErrBatchRange, MaxBatchID)
	}
	return id, nil
}

// CheckBatchID refuses a batch id outside 0..MaxBatchID, naming key.
func CheckBatchID(key string, id int64) error {
	if id < 0 || id > MaxBatchID {
		return fmt.Errorf("%s: %w: %d (want 0..%d)", key, ErrBatchRange, id, MaxBatchID)
	}
	return nil
}

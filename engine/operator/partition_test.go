package operator

import (
	"testing"

	"github.com/ckgate/ckgate/engine/row"
)

func TestPartitionOfIntMatchesEncoding(t *testing.T) {
	for _, k := range []int64{0, 1, -1, 255, 256, 1 << 40, -1 << 63, 1<<63 - 1, 10007} {
		for _, parts := range []int{1, 2, 7, 8, 200} {
			if a, b := partitionOfInt(k, parts), partitionOf(row.IntV(k).AppendKey(nil), parts); a != b {
				t.Fatalf("key %d, %d partitions: %d vs %d", k, parts, a, b)
			}
		}
	}
}

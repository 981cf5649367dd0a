// Package checkpointtest builds synthetic checkpoints for the benchmarks
// of the packages that read them, and uploads them to a store (PutAll);
// package checkpoint's own tests cannot import it: it imports checkpoint.
package checkpointtest

import (
	"fmt"

	"github.com/ckgate/ckgate/engine/checkpoint"
)

// SparkHDFS is a Spark checkpoint with HDFS-provider state: Batches
// batches whose offsets and commits were never cleaned up (retention
// never ran), Ops stateful operators × Parts partitions holding the
// latest Versions state versions (batch n writes version n+1), a delta
// for each and a snapshot every 10, and one source.
type SparkHDFS struct {
	QueryID           string
	Batches, Versions int64
	Ops, Parts        int
	// Delta and Snapshot are the records of every delta and snapshot.
	Delta, Snapshot []checkpoint.StateRecord
	// Conf is the conf of every offsets file (nil: none).
	Conf map[string]string
	// OperatorMetadata: each operator has its metadata file
	// (stateStoreSave, the default store of Parts partitions).
	OperatorMetadata bool
	// Source returns batch n's source offset (JSON).
	Source func(n int64) string
	// Batch, when set, writes batch n's other files (a source log entry)
	// after its commit.
	Batch func(n int64, put func(key string, data []byte)) error
}

// Write calls put for every file of the checkpoint and returns how many
// there are.
func (c SparkHDFS) Write(put func(key string, data []byte)) (int, error) {
	files := 0
	w := func(key string, data []byte) {
		put(key, data)
		files++
	}
	w(checkpoint.MetadataKey, checkpoint.StreamMetadata{ID: c.QueryID}.Encode())
	if c.OperatorMetadata {
		for op := range c.Ops {
			m := checkpoint.OperatorMetadata{OperatorID: int64(op), OperatorName: "stateStoreSave",
				Stores: []checkpoint.StoreMetadata{{Name: checkpoint.DefaultStore, NumPartitions: c.Parts}}}
			data, err := m.Encode()
			if err != nil {
				return files, err
			}
			w(checkpoint.OperatorMetadataKey(fmt.Sprint(op)), data)
		}
	}
	delta := checkpoint.EncodeDelta(c.Delta)
	snap, err := checkpoint.EncodeSnapshot(c.Snapshot)
	if err != nil {
		return files, err
	}
	for n := int64(0); n < c.Batches; n++ {
		seq := checkpoint.OffsetSeq{Metadata: &checkpoint.OffsetSeqMetadata{BatchWatermarkMs: n * 1000, BatchTimestampMs: 1700000000000 + n*1000, Conf: c.Conf},
			Sources: []checkpoint.OffsetEntry{{JSON: c.Source(n), Present: true}}}
		data, err := seq.Encode()
		if err != nil {
			return files, err
		}
		w(checkpoint.OffsetsKey(n), data)
		if data, err = (checkpoint.CommitMetadata{NextBatchWatermarkMs: n*1000 + 500}).Encode(); err != nil {
			return files, err
		}
		w(checkpoint.CommitKey(n), data)
		if c.Batch != nil {
			if err := c.Batch(n, w); err != nil {
				return files, err
			}
		}
		v := n + 1
		if v <= c.Batches-c.Versions {
			continue
		}
		for op := range c.Ops {
			for part := range c.Parts {
				dir := checkpoint.StoreDirKey(fmt.Sprint(op), part, checkpoint.DefaultStore)
				w(fmt.Sprintf("%s/%d.delta", dir, v), delta)
				if v%10 == 0 {
					w(fmt.Sprintf("%s/%d.snapshot", dir, v), snap)
				}
			}
		}
	}
	return files, nil
}

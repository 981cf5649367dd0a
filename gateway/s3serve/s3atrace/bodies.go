package s3atrace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Bodies is what the driver writes into each file; a nil field writes
// what Spark writes (its text formats, for a query reading one Kafka-like
// source "orders" with one partition and writing JSON files).
type Bodies struct {
	Metadata func(queryID string) []byte
	Offsets  func(n int64) []byte
	Commit   func(n int64) []byte
	Source   func() []byte // sources/0/0: the source's initial offsets
	// SinkData is the data file of batch n of a file sink; SinkLog the
	// manifest _spark_metadata/n listing the data files given.
	SinkData func(n int64) []byte
	SinkLog  func(n int64, files []SinkFile) []byte
}

// SinkFile is an entry of a file sink's manifest (Spark's SinkFileStatus).
type SinkFile struct {
	Path             string `json:"path"`
	Size             int64  `json:"size"`
	IsDir            bool   `json:"isDir"`
	ModificationTime int64  `json:"modificationTime"`
	BlockReplication int    `json:"blockReplication"`
	BlockSize        int64  `json:"blockSize"`
	Action           string `json:"action"`
}

// batchTime is the batchTimestampMs of batch n.
func batchTime(n int64) int64 { return 1767225600000 + n*10_000 }

// The state store providers.
const (
	HDFSProvider    = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
	RocksDBProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
)

// sparkConf is the conf an offset log entry of Spark 3.5 records.
const sparkConf = `{"spark.sql.streaming.stateStore.providerClass":"%s",` +
	`"spark.sql.streaming.join.stateFormatVersion":"2","spark.sql.streaming.stateStore.compression.codec":"lz4",` +
	`"spark.sql.streaming.stateStore.rocksdb.formatVersion":"5","spark.sql.streaming.statefulOperator.useStrictDistribution":"true",` +
	`"spark.sql.streaming.flatMapGroupsWithState.stateFormatVersion":"2","spark.sql.streaming.multipleWatermarkPolicy":"min",` +
	`"spark.sql.streaming.aggregation.stateFormatVersion":"2","spark.sql.shuffle.partitions":"%d"}`

func (d *Driver) metadataBody() []byte {
	if d.Bodies.Metadata != nil {
		return d.Bodies.Metadata(d.queryID())
	}
	return fmt.Appendf(nil, `{"id":%q}`, d.queryID())
}

// OffsetsBody is what the driver writes into offsets/n.
func (d *Driver) OffsetsBody(n int64) []byte {
	if d.Bodies.Offsets != nil {
		return d.Bodies.Offsets(n)
	}
	provider := d.Provider
	if provider == "" {
		provider = HDFSProvider
	}
	conf := fmt.Sprintf(sparkConf, provider, max(d.Partitions, 1))
	return fmt.Appendf(nil, "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":%d,\"conf\":%s}\n{\"orders\":{\"0\":%d}}", batchTime(n), conf, (n+1)*100)
}

// CommitBody is what the driver writes into commits/n.
func (d *Driver) CommitBody(n int64) []byte {
	if d.Bodies.Commit != nil {
		return d.Bodies.Commit(n)
	}
	return []byte("v1\n{\"nextBatchWatermarkMs\":0}")
}

func (d *Driver) sourceBody() []byte {
	if d.Bodies.Source != nil {
		return d.Bodies.Source()
	}
	return []byte("\x00v1\n{\"orders\":{\"0\":0}}")
}

func (d *Driver) sinkDataBody(n int64) []byte {
	if d.Bodies.SinkData != nil {
		return d.Bodies.SinkData(n)
	}
	return fmt.Appendf(nil, "{\"batch\":%d,\"orders\":%d}\n", n, (n+1)*100)
}

func (d *Driver) sinkLogBody(n int64, files []SinkFile) []byte {
	if d.Bodies.SinkLog != nil {
		return d.Bodies.SinkLog(n, files)
	}
	out := []byte("v1")
	for _, f := range files {
		line, _ := json.Marshal(f)
		out = append(append(out, '\n'), line...)
	}
	return out
}

// EmptyDelta is an HDFS state store delta file with no updates, as
// Spark's default codec (lz4-java's block stream) writes it: the
// end-of-file marker -1 in one block, then the end-of-stream block.
var EmptyDelta = []byte{0x4c, 0x5a, 0x34, 0x42, 0x6c, 0x6f, 0x63, 0x6b, 0x15, 0x4, 0x0, 0x0, 0x0, 0x4, 0x0, 0x0, 0x0, 0xdb, 0x80, 0x4d, 0x8,
	0xff, 0xff, 0xff, 0xff, 0x4c, 0x5a, 0x34, 0x42, 0x6c, 0x6f, 0x63, 0x6b, 0x15, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0}

// SnapshotInterval is how many versions lie between the HDFS state
// store's snapshots (spark.sql.streaming.stateStore.minDeltasForSnapshot).
const SnapshotInterval = 10

// HDFSDelta is the HDFS state store's files of version v: <v>.delta, and
// <v>.snapshot every SnapshotInterval versions (both with no rows:
// EmptyDelta, which is also an empty snapshot).
func HDFSDelta(_ int, v int64) []File {
	files := []File{{Name: fmt.Sprintf("%d.delta", v), Data: EmptyDelta}}
	if v%SnapshotInterval == 0 {
		files = append(files, File{Name: fmt.Sprintf("%d.snapshot", v), Data: EmptyDelta})
	}
	return files
}

// RocksDBState returns the state files of partition 4 of Spark 4.0.0's
// RocksDB dedup checkpoint, read from testdata (the repository's testdata
// directory): its two SSTs, then <v>.zip naming them, for every version v.
func RocksDBState(testdata string) (func(p int, v int64) []File, error) {
	base := filepath.Join(testdata, "spark", "checkpoint-version-4.0.0", "rocksdb", "dedup", "state", "0", "4")
	var files []File
	for _, name := range []string{"SSTs/000008-5f249adf-c98e-46a3-8217-e39a4360b624.sst", "SSTs/000009-0d1befcf-847e-43a5-b354-a4d11afeaaba.sst", "4.zip"} {
		data, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: name, Data: data})
	}
	return func(_ int, v int64) []File {
		out := append([]File{}, files...)
		out[2].Name = fmt.Sprintf("%d.zip", v)
		return out
	}, nil
}

package checkpoint

import (
	"time"

	"github.com/ckgate/ckgate/gateway"
)

// Options tune Inspect. The zero value is usable.
type Options struct {
	// Batch, when set, details only this batch (the latest offsets and
	// commit are still read to decide the status).
	Batch *int64
	// MaxBatches caps how many of the latest batches are detailed
	// (default 100, Spark's minBatchesToRetain; < 0: none).
	MaxBatches int
	// MaxStateVersions caps how many of the latest versions of each state
	// store partition are decoded for puts/deletes (default 10; < 0: none).
	// The files needed to rebuild the required version are checked anyway.
	MaxStateVersions int
	// MaxDecodeBytes caps the size of a state file that is decoded (default
	// 16 MiB); bigger files are listed, not read.
	MaxDecodeBytes int64
	// Concurrency bounds parallel store requests (default 16).
	Concurrency int
	// VerifyAllChecksums reads every file that has a checksum sidecar and
	// verifies it; by default only the files Inspect reads anyway are.
	VerifyAllChecksums bool
	// Sink, when set, is the output directory of a file sink: its
	// _spark_metadata log is summarised, and Resume says whether the sink
	// already holds an in-flight batch.
	Sink gateway.Store
	// Now is the clock for the writer lease (default time.Now).
	Now func() time.Time
}

const (
	defaultMaxBatches       = 100
	defaultMaxStateVersions = 10
	defaultMaxDecodeBytes   = 16 << 20
	defaultConcurrency      = 16
	maxLogBytes             = gateway.MaxFileBytes // offsets, commits, metadata, schemas, ...
)

func (o Options) withDefaults() Options {
	if o.MaxBatches == 0 {
		o.MaxBatches = defaultMaxBatches
	}
	if o.MaxStateVersions == 0 {
		o.MaxStateVersions = defaultMaxStateVersions
	}
	if o.MaxDecodeBytes <= 0 {
		o.MaxDecodeBytes = defaultMaxDecodeBytes
	}
	if o.Concurrency <= 0 {
		o.Concurrency = defaultConcurrency
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

package s3atrace

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Start is what a new query sends before its first batch: the metadata
// file (and the source's initial offsets, sources/0/0).
func (d *Driver) Start() []Step {
	steps := d.createAtomic(-1, d.key("metadata"), d.metadataBody(), false)
	if d.Source {
		steps = append(steps, d.createAtomic(-1, d.key("sources/0/0"), d.sourceBody(), false)...)
	}
	return steps
}

// Batch is what the driver sends for micro-batch n: offsets/n, the purge
// (with MinBatchesToRetain), the state files of version n+1, the file
// sink's data and manifest, commits/n.
func (d *Driver) Batch(n int64) []Step {
	steps := d.createAtomic(n, d.key(fmt.Sprintf("offsets/%d", n)), d.OffsetsBody(n), false)
	steps = append(steps, d.purge(n)...)
	return append(steps, d.run(n, true)...)
}

// run is batch n after its offsets are logged: state, sink, commit (a
// restarted query re-runs it from here; sink false skips the sink when
// its manifest of n is already there).
func (d *Driver) run(n int64, sink bool) []Step {
	var steps []Step
	for p := range d.Partitions {
		for _, f := range d.state(p, n+1) {
			key := d.key(fmt.Sprintf("state/0/%d/%s", p, f.Name))
			if strings.HasPrefix(f.Name, "SSTs/") {
				steps = append(steps, d.upload(n, key, f.Data)...)
			} else {
				steps = append(steps, d.createAtomic(n, key, f.Data, true)...)
			}
		}
		if from, to := d.stateExpired(n); from < to {
			steps = append(steps, d.deleteState(n, p, from, to))
		}
	}
	if d.Sink != "" && sink {
		steps = append(steps, d.sinkSteps(n)...)
	}
	return append(steps, d.createAtomic(n, d.key(fmt.Sprintf("commits/%d", n)), d.CommitBody(n), false)...)
}

// Query is a new query's start and its batches 0 … batches-1.
func (d *Driver) Query(batches int64) []Step {
	steps := d.Start()
	for n := range batches {
		steps = append(steps, d.Batch(n)...)
	}
	return steps
}

func (d *Driver) state(p int, v int64) []File {
	if d.State != nil {
		return d.State(p, v)
	}
	return HDFSDelta(p, v)
}

// stateExpired is the versions [from, to) of every partition that the
// state store's maintenance deletes after batch n with
// minBatchesToRetain: what no restart from the retained batches needs.
// The HDFS store keeps everything from the snapshot the oldest retained
// version is rebuilt from (so it deletes ten versions at a time); a store
// whose every version stands alone (RocksDB's zip) deletes the version
// that fell out.
func (d *Driver) stateExpired(n int64) (from, to int64) {
	keep := n + 1 - int64(d.MinBatchesToRetain)
	switch {
	case d.MinBatchesToRetain <= 0:
		return 0, 0
	case d.State == nil && keep >= SnapshotInterval && keep%SnapshotInterval == 0:
		return max(1, keep-SnapshotInterval), keep
	case d.State != nil && keep > 1:
		return keep - 1, keep
	}
	return 0, 0
}

// deleteState is the state store maintenance deleting versions [from, to)
// of partition p: their files but the SSTs, which later versions share.
func (d *Driver) deleteState(n int64, p int, from, to int64) Step {
	dir := d.key(fmt.Sprintf("state/0/%d", p))
	return Step{Name: fmt.Sprintf("%s: DELETE state versions %d-%d of partition %d", batchName(n), from, to-1, p), Batch: n, Kind: Delete, Key: dir + "/", Group: "purge " + dir,
		Do: func(ctx context.Context) error {
			for v := from; v < to; v++ {
				for _, f := range d.state(p, v) {
					if strings.HasPrefix(f.Name, "SSTs/") {
						continue // RocksDB deletes only the SSTs no version names
					}
					key := dir + "/" + f.Name
					if _, err := d.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &d.Bucket, Key: aws.String(key)}, d.opts("op_delete", key)...); err != nil {
						return fmt.Errorf("delete %s: %w", key, err)
					}
				}
			}
			return nil
		}}
}

// sinkSteps is a file sink committing batch n: a direct PUT of its data
// file, then its manifest (N.compact every CompactInterval batches,
// listing every file so far).
func (d *Driver) sinkSteps(n int64) []Step {
	data := d.sinkDataBody(n)
	name := fmt.Sprintf("part-00000-%s.c000.json", UUID())
	dataKey := d.Sink + "/" + name
	put := Step{Name: fmt.Sprintf("%s: PUT %s", batchName(n), dataKey), Batch: n, Kind: Put, Key: dataKey, Group: dataKey,
		Do: func(ctx context.Context) error {
			_, err := d.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: &d.Bucket, Key: aws.String(dataKey), Body: strings.NewReader(string(data))}, d.opts("op_create", dataKey)...)
			return err
		}}
	files := []SinkFile{{Path: "s3a://" + d.Bucket + "/" + dataKey, Size: int64(len(data)), ModificationTime: batchTime(n),
		BlockReplication: 1, BlockSize: 32 << 20, Action: "add"}}
	interval := int64(d.CompactInterval)
	if interval <= 0 {
		interval = 10
	}
	log := fmt.Sprintf("%d", n)
	if (n+1)%interval == 0 {
		log += ".compact"
		// A compaction lists every file so far; earlier ones by a
		// placeholder path each (the manifest's content is the sink's).
		all := make([]SinkFile, 0, n+1)
		for i := range n {
			all = append(all, SinkFile{Path: fmt.Sprintf("s3a://%s/%s/batch-%d.json", d.Bucket, d.Sink, i), Size: 1,
				ModificationTime: batchTime(i), BlockReplication: 1, BlockSize: 32 << 20, Action: "add"})
		}
		files = append(all, files...)
	}
	manifest := d.createAtomic(n, d.Sink+"/_spark_metadata/"+log, d.sinkLogBody(n, files), false)
	return append([]Step{put}, manifest...)
}

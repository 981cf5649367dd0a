package s3atrace

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// purge is MicroBatchExecution's purge after offsets/n with
// minBatchesToRetain: HDFSMetadataLog.purge(n - retain) of the offset and
// commit logs, each a LIST of the directory and a DELETE of every batch
// file below the threshold.
func (d *Driver) purge(n int64) []Step {
	threshold := n - int64(d.MinBatchesToRetain)
	if d.MinBatchesToRetain <= 0 || threshold <= 0 {
		return nil
	}
	var steps []Step
	for _, log := range []string{"offsets", "commits"} {
		dir := d.key(log)
		var below []string
		steps = append(steps,
			Step{Name: fmt.Sprintf("%s: LIST %s/ (purge below %d)", batchName(n), dir, threshold), Batch: n, Kind: List, Key: dir + "/", Group: "purge " + dir,
				Do: func(ctx context.Context) error {
					ids, err := d.batchFiles(ctx, dir)
					below = below[:0]
					for _, id := range ids {
						if id < threshold {
							below = append(below, fmt.Sprintf("%s/%d", dir, id))
						}
					}
					return err
				}},
			Step{Name: fmt.Sprintf("%s: DELETE %s/ below %d", batchName(n), dir, threshold), Batch: n, Kind: Delete, Key: dir + "/", Group: "purge " + dir,
				Do: func(ctx context.Context) error {
					for _, key := range below {
						if _, err := d.Client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &d.Bucket, Key: aws.String(key)}, d.opts("op_delete", key)...); err != nil {
							return fmt.Errorf("purge %s: %w", key, err)
						}
					}
					return nil
				}})
	}
	return steps
}

// batchFiles lists a log directory as HDFSMetadataLog does (its
// batchFilesFilter): the batch ids of the files named by a number (or
// N.compact), temps and other names skipped.
func (d *Driver) batchFiles(ctx context.Context, dir string) ([]int64, error) {
	var ids []int64
	p := s3.NewListObjectsV2Paginator(d.Client, &s3.ListObjectsV2Input{Bucket: &d.Bucket, Prefix: aws.String(dir + "/"), Delimiter: aws.String("/")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx, d.opts("op_list_status", dir)...)
		if err != nil {
			return nil, fmt.Errorf("list %s/: %w", dir, err)
		}
		for _, o := range page.Contents {
			name := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(o.Key), dir+"/"), ".compact")
			if id, err := strconv.ParseInt(name, 10, 64); err == nil && id >= 0 && name == strconv.FormatInt(id, 10) {
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}
